#!/usr/bin/env python3
"""The layering holds: no folder's CMake target depends on a target of a folder above it.

The layers are the picture in docs/architecture.md, "Layers" (written there once: each line that
starts a layer names its folders, the top line the highest layer). The targets and what each
depends on (its links, and what add_dependencies builds first) come from CMake's file API
(codemodel-v2): from BUILD_DIR when its last configure answered this test's query
(tests/CMakeLists.txt writes it), else from a configure of SOURCE_DIR into a temporary folder.

Fails on a dependency up or sideways (a folder of the same layer), on a folder with targets that
the picture does not place (tests/ excepted: the tests link whatever they test), and on a layer
folder without its row in docs/source-layout.md.

  layering_test.py SOURCE_DIR [BUILD_DIR]
"""
import glob
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

LAYER_LINE = re.compile(r"^ ?((?:[a-z_]+/)(?: [a-z_]+/)*)(?:\s{2,}|$)")
UNLAYERED = {"tests"}


def layers_of(architecture):
    """{folder: rank}, rank 0 the bottom layer, from the code block under "## Layers"."""
    text = architecture.read_text()
    section = text.split("\n## Layers\n", 1)
    if len(section) < 2:
        sys.exit(f"FAILED: {architecture} has no '## Layers' section")
    block = section[1].split("```", 2)
    if len(block) < 3:
        sys.exit(f"FAILED: {architecture}, 'Layers': no picture (a ``` block)")
    lines = [match.group(1).split() for match in map(LAYER_LINE.match, block[1].splitlines()) if match]
    ranks = {}
    for rank, folders in enumerate(reversed(lines)):
        for folder in folders:
            ranks[folder.rstrip("/")] = rank
    return ranks


def codemodel_reply(build):
    """The newest codemodel-v2 reply in `build`, or None."""
    indexes = sorted(glob.glob(os.path.join(build, ".cmake/api/v1/reply/index-*.json")))
    if not indexes:
        return None
    reply = os.path.dirname(indexes[-1])
    index = json.loads(pathlib.Path(indexes[-1]).read_text())
    for answer in index.get("reply", {}).values():
        found = answer.get("codemodel-v2") if isinstance(answer, dict) else None
        if isinstance(found, dict) and "jsonFile" in found:
            return os.path.join(reply, found["jsonFile"])
    for name, answer in index.get("reply", {}).items():
        if name.startswith("codemodel-v2") and "jsonFile" in answer:
            return os.path.join(reply, answer["jsonFile"])
    return None


def configure_elsewhere(source, folder):
    query = pathlib.Path(folder, ".cmake/api/v1/query/codemodel-v2")
    query.parent.mkdir(parents=True)
    query.touch()
    configured = subprocess.run(["cmake", "-S", source, "-B", folder], capture_output=True, text=True)
    if configured.returncode != 0:
        sys.exit("FAILED: configuring " + source + ":\n" + configured.stdout[-2000:] + configured.stderr[-2000:])
    return codemodel_reply(folder)


def targets_of(codemodel_path):
    """{target name: (folder, [names of the targets it depends on])}."""
    reply = os.path.dirname(codemodel_path)
    codemodel = json.loads(pathlib.Path(codemodel_path).read_text())
    configuration = codemodel["configurations"][0]
    names, files = {}, {}
    for target in configuration["targets"]:
        names[target["id"]] = target["name"]
        files[target["name"]] = os.path.join(reply, target["jsonFile"])
    targets = {}
    for name, path in files.items():
        target = json.loads(pathlib.Path(path).read_text())
        folder = target["paths"]["source"].split("/")[0]
        targets[name] = (folder, [names[d["id"]] for d in target.get("dependencies", []) if d["id"] in names])
    return targets


def main():
    source = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else None
    ranks = layers_of(pathlib.Path(source, "docs", "architecture.md"))
    codemodel = codemodel_reply(build) if build else None
    with tempfile.TemporaryDirectory(prefix="dnntune-layers-") as scratch:
        if codemodel is None:
            codemodel = configure_elsewhere(source, scratch)
        if codemodel is None:
            sys.exit("FAILED: CMake wrote no codemodel-v2 reply")
        targets = targets_of(codemodel)

    problems, checked = [], 0
    for name, (folder, dependencies) in sorted(targets.items()):
        if folder in UNLAYERED:
            continue
        if folder not in ranks:
            problems.append(f"{folder}/ builds {name} but has no layer in docs/architecture.md, 'Layers'")
            continue
        for dependency in dependencies:
            below = targets[dependency][0]
            if below == folder:
                continue
            checked += 1
            if below not in ranks:
                continue  # reported above as a folder without a layer
            if ranks[below] >= ranks[folder]:
                way = "up" if ranks[below] > ranks[folder] else "sideways"
                problems.append(f"{name} ({folder}/) depends on {dependency} ({below}/): {way} the layering")

    layout = pathlib.Path(source, "docs", "source-layout.md").read_text()
    for folder in ranks:
        if f"| `{folder}/` |" not in layout:
            problems.append(f"{folder}/ has a layer but no row in docs/source-layout.md")

    up = sum(1 for problem in problems if " the layering" in problem)
    print(f"{len(targets)} targets, {checked} dependencies between folders, {up} up or sideways")
    for problem in problems:
        print("FAILED: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

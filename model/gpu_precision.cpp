// model/gpu_precision.cpp — see gpu_precision.hpp.
#include "model/gpu_precision.hpp"

#include "records/measurement.hpp"

namespace dnntune::model {

// The enums follow records' lists, in their order (records/measurement.hpp).
std::string gpu_precision_name(GpuPrecision precision) {
  const auto index = static_cast<std::size_t>(precision);
  return index < records::precision_names().size() ? records::precision_names()[index] : "fp32";
}

std::string gpu_memory_format_name(GpuMemoryFormat memory_format) {
  return records::memory_format_names()[static_cast<std::size_t>(memory_format)];
}

Expected<GpuPrecision> parse_gpu_precision(const std::string& text) {
  for (int index = 0; index < gpu_precision_count; ++index)
    if (gpu_precision_name(static_cast<GpuPrecision>(index)) == text) return static_cast<GpuPrecision>(index);
  return bad_input("--precision must be " + records::names_text(records::precision_names()) + ", not '" + text + "'");
}

Expected<GpuMemoryFormat> parse_gpu_memory_format(const std::string& text) {
  const auto& names = records::memory_format_names();
  for (std::size_t index = 0; index < names.size(); ++index)
    if (names[index] == text) return static_cast<GpuMemoryFormat>(index);
  return bad_input("--memory-format must be " + records::names_text(names) + ", not '" + text + "'");
}

bool is_mixed_precision(GpuPrecision precision) {
  return precision == GpuPrecision::bf16 || precision == GpuPrecision::fp16;
}

double activation_bytes_ratio(GpuPrecision precision) { return is_mixed_precision(precision) ? 0.5 : 1.0; }

std::vector<std::string> gpu_script_settings(GpuPrecision precision, GpuMemoryFormat memory_format, bool gpu_has_tf32) {
  std::vector<std::string> lines;
  switch (precision) {
    case GpuPrecision::fp32:
      if (gpu_has_tf32)
        lines.push_back(
            "torch.backends.cudnn.allow_tf32 = False; torch.backends.cuda.matmul.allow_tf32 = False  "
            "(strict fp32: no TF32 tensor cores anywhere)");
      else
        lines.push_back("nothing for the math: fp32 is PyTorch's default here (no autocast)");
      break;
    case GpuPrecision::tf32:
      // The model (and dnntune's trainers) run matmul in fp32 under tf32: PyTorch's default since 1.12.
      lines.push_back(
          "torch.backends.cudnn.allow_tf32 = True; torch.backends.cuda.matmul.allow_tf32 = False  "
          "(PyTorch's defaults: convolutions on TF32 tensor cores, the classifier's matmul in fp32, "
          "as predicted)");
      break;
    case GpuPrecision::bf16:
      lines.push_back("with torch.autocast('cuda', dtype=torch.bfloat16): forward and loss (no GradScaler needed)");
      break;
    case GpuPrecision::fp16:
      lines.push_back("with torch.autocast('cuda', dtype=torch.float16): forward and loss");
      lines.push_back(
          "scaler = torch.cuda.amp.GradScaler(): scaler.scale(loss).backward(); scaler.step(optimizer); "
          "scaler.update()  (fp16 needs a GradScaler: small gradients underflow)");
      break;
    case GpuPrecision::count_:
      break;
  }
  lines.push_back("torch.backends.cudnn.benchmark = True  (cuDNN picks its fastest algorithm per shape)");
  if (memory_format == GpuMemoryFormat::channels_last)
    lines.push_back(
        "model = model.to(memory_format=torch.channels_last); "
        "images = images.to(memory_format=torch.channels_last)");
  return lines;
}

}  // namespace dnntune::model

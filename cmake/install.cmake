# cmake/install.cmake — what `cmake --install` puts into a prefix, so other programs use the
# model as a library: the light libraries (common, workloads, records, data, model,
# tuner: no hwloc, oneDNN, libtorch or MPI) as dnntune::NAME targets of an exported CMake
# package (`find_package(dnntune)`), their headers under include/dnntune/ (included as
# "model/predictor.hpp" or <dnntune/model/predictor.hpp>), a pkg-config file, and the
# `dnntune` command. probe, calibrate and train (the hardware side) are not installed: it is the command's own.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(dnntune_library_targets common workloads records data model tuner)
foreach(target IN LISTS dnntune_library_targets)
  # lib/libdnntune_model.a, not lib/libmodel.a, in a shared prefix.
  set_target_properties(${target} PROPERTIES OUTPUT_NAME dnntune_${target} EXPORT_NAME ${target})
endforeach()

install(TARGETS ${dnntune_library_targets} EXPORT dnntuneTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR}/dnntune)
install(DIRECTORY common workloads records model tuner data DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dnntune
  FILES_MATCHING PATTERN "*.hpp")
install(TARGETS dnntune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/dnntune/schemas)

install(EXPORT dnntuneTargets NAMESPACE dnntune:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dnntune)
configure_package_config_file(cmake/dnntuneConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/dnntuneConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dnntune)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/dnntuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dnntuneConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/dnntuneConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dnntune)

# pkg-config: the libraries in link order, with NLopt (the model's fit) after them.
get_filename_component(dnntune_nlopt_directory ${NLOPT_LIBRARY} DIRECTORY)
configure_file(cmake/dnntune.pc.in ${CMAKE_CURRENT_BINARY_DIR}/dnntune.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dnntune.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

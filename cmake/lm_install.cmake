# What `cmake --install` (and `make install`) puts under the prefix:
#   include/lightmetal/               public headers, lm_version.h included
#   lib/liblightmetal.{a,so}          the library (lightmetal::lightmetal)
#   lib/liblightmetal_replay.{a,so}   the replay-only library (lightmetal::replay)
#   lib/pkgconfig/lightmetal.pc, lightmetal-replay.pc
#   lib/cmake/lightmetal/             the CMake package (find_package(lightmetal))
#   share/lightmetal/kernel-sdk/      what kernels include, crt0, linker script
#   bin/lightmetal                    the command-line tool
#
# The library records where its kernel SDK is installed, from the prefix the
# build was configured with (CMAKE_INSTALL_PREFIX): configure with the prefix
# you install to, or stage with DESTDIR.
include(CMakePackageConfigHelpers)

set(LM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lightmetal)
set(LM_INSTALL_SDKDIR ${CMAKE_INSTALL_DATADIR}/lightmetal/kernel-sdk)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lightmetal ${PROJECT_BINARY_DIR}/include/lightmetal
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernel-sdk/ DESTINATION ${LM_INSTALL_SDKDIR}
        COMPONENT Runtime)
install(TARGETS lightmetal_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
install(TARGETS lightmetal_shared lightmetal_replay_shared lightmetal_static
                lightmetal_replay_static
        EXPORT lightmetalTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime
                NAMELINK_COMPONENT Development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The CMake package: lightmetal::lightmetal and lightmetal::replay (shared),
# lightmetal::lightmetal_static and lightmetal::replay_static.
install(EXPORT lightmetalTargets NAMESPACE lightmetal:: DESTINATION ${LM_INSTALL_CMAKEDIR}
        COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lightmetalConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lightmetalConfig.cmake
  INSTALL_DESTINATION ${LM_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR LM_INSTALL_SDKDIR)
# Compatible versions share the ABI version (see LM_SOVERSION).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(compatibility SameMinorVersion)
else()
  set(compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lightmetalConfigVersion.cmake
  COMPATIBILITY ${compatibility})
install(FILES ${PROJECT_BINARY_DIR}/lightmetalConfig.cmake
              ${PROJECT_BINARY_DIR}/lightmetalConfigVersion.cmake
        DESTINATION ${LM_INSTALL_CMAKEDIR} COMPONENT Development)

# pkg-config files, written when installing so that they name the prefix
# installed to (`cmake --install --prefix` may differ from the configured one).
foreach(dir LIBDIR INCLUDEDIR DATADIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(LM_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(LM_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(LM_PC_PREFIX "@LM_PC_PREFIX@") # substituted at install time
foreach(pc lightmetal lightmetal-replay)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc.in @ONLY)
endforeach()
install(CODE "
  set(LM_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  foreach(pc lightmetal lightmetal-replay)
    set(out \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/\${pc}.pc\")
    if(IS_ABSOLUTE \"${CMAKE_INSTALL_LIBDIR}\")
      set(out \"\$ENV{DESTDIR}${CMAKE_INSTALL_LIBDIR}/pkgconfig/\${pc}.pc\")
    endif()
    message(STATUS \"Installing: \${out}\")
    configure_file(\"${PROJECT_BINARY_DIR}/\${pc}.pc.in\" \"\${out}\" @ONLY)
  endforeach()
  if(NOT \"\${CMAKE_INSTALL_PREFIX}\" STREQUAL \"${CMAKE_INSTALL_PREFIX}\")
    message(WARNING \"lightmetal was configured for the prefix ${CMAKE_INSTALL_PREFIX}: \"
      \"installed in \${CMAKE_INSTALL_PREFIX}, it looks for its kernel SDK in \"
      \"${CMAKE_INSTALL_FULL_DATADIR}/lightmetal/kernel-sdk. Configure with \"
      \"-DCMAKE_INSTALL_PREFIX=\${CMAKE_INSTALL_PREFIX}, or set LM_KERNEL_SDK_DIR.\")
  endif()
" COMPONENT Development)

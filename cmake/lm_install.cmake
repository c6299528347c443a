# What `cmake --install` (and `make install`) puts under the prefix:
#   include/lightmetal/               public headers, lm_version.h included
#   lib/liblightmetal.{a,so}          the library (lightmetal::lightmetal)
#   lib/liblightmetal_replay.{a,so}   the replay-only library (lightmetal::replay)
#   lib/pkgconfig/lightmetal.pc, lightmetal-replay.pc
#   lib/cmake/lightmetal/             the CMake package (find_package(lightmetal))
#   share/lightmetal/kernel-sdk/      what kernels include, crt0, linker script
#   bin/lightmetal                    the command-line tool
#
# The install is relocatable: the library and the tool find the kernel SDK
# relative to their own directory (see jit_sdk_dir in src/runtime/jit.h), the
# pkg-config files relative to their own (${pcfiledir}), the CMake package
# relative to itself. So `cmake --install BUILD --prefix ANY` works whatever
# prefix was configured, and so does moving the installed tree. Only programs
# linked with the static library, which carry the code elsewhere, go by the
# configured prefix (CMAKE_INSTALL_PREFIX) or LM_KERNEL_SDK_DIR.
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

# pkg-config files, written when installing. With relative install
# directories their prefix is ${pcfiledir} (their own directory) and the way
# up, so a moved install still works; otherwise the prefix installed to
# (`cmake --install --prefix` may differ from the configured one).
foreach(dir LIBDIR INCLUDEDIR DATADIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(LM_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(LM_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(LM_PC_PREFIX "@LM_PC_PREFIX@") # substituted at install time
else()
  file(RELATIVE_PATH up ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" up "${up}")
  set(LM_PC_PREFIX "\${pcfiledir}/${up}")
endif()
# The static library's own dependencies (the shared one links them itself).
set(LM_PC_LIBS_PRIVATE "")
if(LM_ENABLE_ONNX)
  set(LM_PC_LIBS_PRIVATE "-lprotobuf-c")
endif()
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
    message(STATUS \"lightmetal was configured for the prefix ${CMAKE_INSTALL_PREFIX}: the \"
      \"library and bin/lightmetal find their kernel SDK wherever installed, but programs \"
      \"linked with liblightmetal.a look in ${CMAKE_INSTALL_FULL_DATADIR}/lightmetal/kernel-sdk; \"
      \"set LM_KERNEL_SDK_DIR for them\")
  endif()
" COMPONENT Development)

# posenc::posenc: posenc header-only, as an INTERFACE target. Shared by CMakeLists.txt
# (add_subdirectory) and the installed posencConfig.cmake (find_package); POSENC_INCLUDE_DIR is
# where posenc.h lies. The consumer defines POSENC_IMPLEMENTATION in one file (README).
if(NOT TARGET posenc::posenc)
  add_library(posenc::posenc INTERFACE IMPORTED GLOBAL)
  set_target_properties(posenc::posenc PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${POSENC_INCLUDE_DIR}")
  # posenc.h refuses x87 arithmetic (FLT_EVAL_METHOD != 0): 32-bit x86 needs SSE2 math. Contraction
  # needs nothing here: posenc.h switches it off around its own code.
  if(CMAKE_SIZEOF_VOID_P EQUAL 4 AND NOT MSVC
     AND CMAKE_SYSTEM_PROCESSOR MATCHES "^([iI][3-6]86|x86|X86|amd64|AMD64|x86_64)$")
    set_target_properties(posenc::posenc PROPERTIES INTERFACE_COMPILE_OPTIONS "-msse2;-mfpmath=sse")
  endif()
  # s390x: GCC's strict ISO modes (-std=c99) evaluate float in double (FLT_EVAL_METHOD 1).
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^s390x$" AND NOT MSVC)
    set_target_properties(posenc::posenc PROPERTIES INTERFACE_COMPILE_OPTIONS "-fexcess-precision=fast")
  endif()
endif()

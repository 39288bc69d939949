# Warnings and sanitizers applied to every Lathe target through lathe_options.
add_library(lathe_options INTERFACE)
target_compile_options(lathe_options INTERFACE -Wall -Wextra -Wpedantic -Wnon-virtual-dtor
                                               -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(lathe_options INTERFACE -Wshadow=local)
else()
  target_compile_options(lathe_options INTERFACE -Wshadow-uncaptured-local)
endif()
if(LATHE_WERROR)
  target_compile_options(lathe_options INTERFACE -Werror)
endif()
if(LATHE_SANITIZE)
  target_compile_options(lathe_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=undefined)
  target_link_options(lathe_options INTERFACE -fsanitize=address,undefined)
endif()
if(LATHE_BUILD_FUZZERS)
  # Coverage instrumentation for everything the fuzzers link; the fuzzer main is added per target.
  target_compile_options(lathe_options INTERFACE -fsanitize=fuzzer-no-link)
endif()

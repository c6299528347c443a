# cmake -DOUT=<file.c> -DPRELUDE=<header> -DKERNELS=<a.c;b.c;...> -P lm_embed_kernels.cmake
#
# Writes a C file defining nn_kernels[] (see src/nn/nn_kernels.h): for each
# kernel file its name and its source, the prelude header first, then a #line
# directive so compiler messages name the kernel file and its own lines.
file(READ ${PRELUDE} prelude HEX)
set(body "")
set(table "")
set(i 0)
foreach(kernel IN LISTS KERNELS)
  get_filename_component(name ${kernel} NAME)
  file(READ ${kernel} text HEX)
  string(HEX "#line 1 \"${name}\"\n" line)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${prelude}${line}${text}")
  string(APPEND body "static const char source_${i}[] = {${bytes}0};\n")
  string(APPEND table "    {\"${name}\", source_${i}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE ${OUT}.tmp "/* Generated from src/nn/kernels by lm_embed_kernels.cmake. */
#include \"nn/nn_kernels.h\"

${body}
const nn_kernel_entry nn_kernels[] = {
${table}};
const size_t nn_kernel_count = ${i};
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)

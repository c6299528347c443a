/* `lightmetal dump`: a verified binary's table area as JSON.
 *
 * The output is what `flatc --json --strict-json` prints for the same file
 * with schema/lightmetal.fbs: every present field in schema order, enums by
 * name, structs as objects, a union as "<field>_type" plus "<field>", absent
 * fields omitted (key fields always printed, as flatc does). It is driven by
 * the field lists of format/lmb_schema.h, so it follows the schema without
 * per-table code.
 */
#ifndef LM_TOOLS_LMT_DUMP_H
#define LM_TOOLS_LMT_DUMP_H

#include <stdio.h>

#include "format/lmb.h"

/* Writes the root table of a file that passed lmb_verify() to `out`. */
void lmt_dump_root(FILE *out, fb_table root);

#endif

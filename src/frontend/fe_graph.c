/* The graph form's small helpers: element types, the arena, constants,
 * types, attribute and name look-ups. */
#include "frontend/fe_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

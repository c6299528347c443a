/* Conversions between the file's enums and the public API's, which number
 * some members differently (the file's DataFormat has members the API has not
 * got yet). Used by both capture and replay, so the mapping is written once. */
#ifndef LM_FORMAT_LMB_ENUMS_H
#define LM_FORMAT_LMB_ENUMS_H

#include "format/lmb_schema.h"
#include "lightmetal/lm_tile.h"

static inline lmb_DataFormat lmb_data_format_from_api(lm_data_format f) {
    switch (f) {
    case LM_DATA_FORMAT_FLOAT32:
        return LMB_DataFormat_Float32;
    case LM_DATA_FORMAT_FLOAT16_B:
        return LMB_DataFormat_Float16_b;
    case LM_DATA_FORMAT_BFP8_B:
        return LMB_DataFormat_Bfp8_b;
    case LM_DATA_FORMAT_UINT32:
        return LMB_DataFormat_UInt32;
    case LM_DATA_FORMAT_INT32:
        return LMB_DataFormat_Int32;
    case LM_DATA_FORMAT_INVALID:
        break;
    }
    return LMB_DataFormat_Invalid;
}

/* LM_DATA_FORMAT_INVALID for file formats the API cannot use. */
static inline lm_data_format lmb_data_format_to_api(lmb_DataFormat f) {
    switch (f) {
    case LMB_DataFormat_Float32:
        return LM_DATA_FORMAT_FLOAT32;
    case LMB_DataFormat_Float16_b:
        return LM_DATA_FORMAT_FLOAT16_B;
    case LMB_DataFormat_Bfp8_b:
        return LM_DATA_FORMAT_BFP8_B;
    case LMB_DataFormat_UInt32:
        return LM_DATA_FORMAT_UINT32;
    case LMB_DataFormat_Int32:
        return LM_DATA_FORMAT_INT32;
    default:
        break;
    }
    return LM_DATA_FORMAT_INVALID;
}

#endif

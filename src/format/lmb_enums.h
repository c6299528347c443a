/* Conversions between the file's enums and the public API's, which number
 * some members differently (the file's DataFormat has members the API has not
 * got yet). Used by both capture and replay, so the mapping is written once. */
#ifndef LM_FORMAT_LMB_ENUMS_H
#define LM_FORMAT_LMB_ENUMS_H

#include "format/lmb_schema.h"
#include "lightmetal/lm_capture.h"
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

/* The element types share the file's numbering. */
static inline lmb_ElementType lmb_element_type_from_api(lm_element_type t) {
    return (lmb_ElementType)t;
}

static inline lm_element_type lmb_element_type_to_api(lmb_ElementType t) {
    return (lm_element_type)t;
}

/* Which storage formats hold an element type: the one table capture, the
 * verifier and the tools follow (schema/lightmetal.fbs, ElementType).
 * Invalid (the format's own type) fits every format. */
static inline bool lmb_element_type_fits(lmb_ElementType t, lmb_DataFormat f) {
    switch (t) {
    case LMB_ElementType_Invalid:
        return true;
    case LMB_ElementType_Float64:
    case LMB_ElementType_Float16:
        return f == LMB_DataFormat_Float32;
    case LMB_ElementType_Int64:
    case LMB_ElementType_Int16:
    case LMB_ElementType_Int8:
        return f == LMB_DataFormat_Int32;
    case LMB_ElementType_UInt16:
    case LMB_ElementType_UInt8:
    case LMB_ElementType_Bool:
        return f == LMB_DataFormat_Int32 || f == LMB_DataFormat_UInt32;
    case LMB_ElementType_UInt64:
        return f == LMB_DataFormat_UInt32;
    }
    return false;
}

/* For messages: the formats an element type needs ("Int32 or UInt32"). */
static inline const char *lmb_element_type_storage_text(lmb_ElementType t) {
    switch (t) {
    case LMB_ElementType_Float64:
    case LMB_ElementType_Float16:
        return "Float32";
    case LMB_ElementType_Int64:
    case LMB_ElementType_Int16:
    case LMB_ElementType_Int8:
        return "Int32";
    case LMB_ElementType_UInt16:
    case LMB_ElementType_UInt8:
    case LMB_ElementType_Bool:
        return "Int32 or UInt32";
    case LMB_ElementType_UInt64:
        return "UInt32";
    default:
        return "no format";
    }
}

#endif

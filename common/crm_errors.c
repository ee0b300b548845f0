/* crm_errors.c -- lookup of CUDA error names and messages in the generated table. */
#include "common/crm_errors.h"

#include "crm_errors_table.h" /* generated into $(GEN) by tools/gen_errors.py */

#define CRM__NAME_CASE(code, name, msg)   case code: return name;
#define CRM__STRING_CASE(code, name, msg) case code: return msg;

const char *crm_error_name(int err)
{
    switch (err) {
    CRM_CUDA_ERROR_MAP(CRM__NAME_CASE)
    default: return CRM_CUDA_ERROR_UNKNOWN_NAME;
    }
}

const char *crm_error_string(int err)
{
    switch (err) {
    CRM_CUDA_ERROR_MAP(CRM__STRING_CASE)
    default: return CRM_CUDA_ERROR_UNKNOWN_STRING;
    }
}

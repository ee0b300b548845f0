/* crm_errors.h -- names and messages of CUDA runtime error codes, without libcudart.
 *
 * The table is generated at build time (tools/gen_errors.py) from the enum cudaError
 * in the CUDA headers and the answers of the real libcudart, so these functions
 * return exactly what cudaGetErrorName / cudaGetErrorString return.
 */
#ifndef CRM_ERRORS_H
#define CRM_ERRORS_H

/* Returns the enumerator name of err ("cudaErrorInvalidValue"), or the real
 * runtime's text for an unknown code. Never NULL; the string is static. */
const char *crm_error_name(int err);

/* Returns the message of err ("invalid argument"), or the real runtime's text for
 * an unknown code. Never NULL; the string is static. */
const char *crm_error_string(int err);

#endif

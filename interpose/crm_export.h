/* crm_export.h -- marks the functions libcudarem.so exports (CUDA names only). */
#ifndef CRM_EXPORT_H
#define CRM_EXPORT_H

#define CRM_EXPORT __attribute__((visibility("default")))

#endif

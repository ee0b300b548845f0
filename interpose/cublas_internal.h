/* cublas_internal.h -- prototypes of cuBLAS functions no public header declares but
 * NVIDIA's other libraries call (cuSOLVER calls cublasSetEnvironmentMode on the
 * handle it made with cublasCreate, which is the shim's). Read only by
 * tools/gen_fallback.py, beside cublas_api.h: each takes a cuBLAS handle first (its
 * code tests the handle's initialised flag before anything else), so its fallback
 * trampoline hands NVIDIA's library the handle it made for the shim's. The other
 * parameters pass through untouched, whatever they are. Not compiled. */
cublasStatus_t cublasSetEnvironmentMode(cublasHandle_t handle, int mode);
cublasStatus_t cublasGetEnvironmentMode(cublasHandle_t handle, int *mode);
cublasStatus_t cublasSbdmm(cublasHandle_t handle, ...);
cublasStatus_t cublasDbdmm(cublasHandle_t handle, ...);
cublasStatus_t cublasCbdmm(cublasHandle_t handle, ...);
cublasStatus_t cublasZbdmm(cublasHandle_t handle, ...);

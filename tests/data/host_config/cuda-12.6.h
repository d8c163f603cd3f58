/* The host compiler block of CUDA 12.6's crt/host_config.h, in the shape
 * STACK.md §6.1 records (zspace/system.cuda-12.6@b3d92c83): GCC up to 13,
 * clang below 19; the #error texts are cut at "[...]". */
#if !__NV_NO_HOST_COMPILER_CHECK

#if defined(__INTEL_CLANG_COMPILER)
#error -- unsupported Intel ICX compiler! [...]
#endif /* __INTEL_CLANG_COMPILER */

#if defined(__GNUC__)

#if __GNUC__ > 13

#error -- unsupported GNU version! gcc versions later than 13 are not supported! [...]

#endif /* __GNUC__ > 13 */


#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__)

#if (__clang_major__ >= 19) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))
#error -- unsupported clang version! clang version must be less than 19 and greater than 3.2 . [...]

#endif  /* (__clang_major__ >=  19) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3)) */

#endif /* defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__) */


#endif /* __GNUC__ */

#endif  /* !__NV_NO_HOST_COMPILER_CHECK */

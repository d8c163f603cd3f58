# stop.cmake: tests/pytorch/configure.sh hands it to PyTorch's configure as
# CMAKE_PROJECT_INCLUDE (setup.py passes every CMAKE_* variable of the
# environment on). It stops the configure with a fatal error once
# cmake/Dependencies.cmake has decided every CUDA part (toolkit, nvcc, host
# compiler, cudart, cuDNN, NCCL, CUB, MAGMA, cuSPARSELt): the top-level
# CMakeLists.txt reads DEBUG_CUDA next. What follows (the code generation of
# c10, caffe2 and torch: most of the configure's time) decides nothing that
# doctor --build predicts. CMake writes CMakeCache.txt all the same;
# compare.py takes the message "cudamod-stop" for a configure that passed.
include_guard(GLOBAL)
function(cudamod_stop variable access value file)
        # option(DEBUG_CUDA) reads it too, before Dependencies.cmake set
        # CAFFE2_USE_CUDNN.
        if(access STREQUAL "READ_ACCESS" AND DEFINED CAFFE2_USE_CUDNN
           AND file STREQUAL "${CMAKE_SOURCE_DIR}/CMakeLists.txt")
                message(FATAL_ERROR "cudamod-stop: the CUDA parts are decided")
        endif()
endfunction()
variable_watch(DEBUG_CUDA cudamod_stop)

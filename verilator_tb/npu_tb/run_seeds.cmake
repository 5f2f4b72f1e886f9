# ctest npu_tb_random: run the unit testbench over several seeds
# (cmake -DEXE=... -DSEEDS="1;2;..." -P this).
foreach(seed ${SEEDS})
  execute_process(COMMAND ${EXE} --seed ${seed} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "npu_tb --seed ${seed} failed")
  endif()
endforeach()

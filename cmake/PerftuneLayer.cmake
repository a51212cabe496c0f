# perftune_layer(NAME DEPS ...): a static library made of every .cpp in the calling folder and in
# the concept folders the caller lists in PERFTUNE_LAYER_CONCEPTS (surrogate/gnn, surrogate/fusion...).
# Globbing (with CONFIGURE_DEPENDS) keeps "one concept per file" cheap: adding a file needs no edit here.
function(perftune_layer name)
  set(patterns ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  foreach(concept ${PERFTUNE_LAYER_CONCEPTS})
    list(APPEND patterns ${CMAKE_CURRENT_SOURCE_DIR}/${concept}/*.cpp)
  endforeach()
  file(GLOB sources CONFIGURE_DEPENDS ${patterns})
  if(NOT sources)
    set(sources ${CMAKE_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(${name} STATIC ${sources} ${PERFTUNE_LAYER_EXTRA_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARGN})
  perftune_torch_pch(${name} ${sources})
endfunction()

# perftune_includes_torch(FILE OUT): sets OUT to TRUE when FILE includes <torch/...> itself or
# through a project header (#include "layer/x.h", followed recursively).
function(perftune_includes_torch file out)
  get_property(known GLOBAL PROPERTY "perftune_torch_${file}" SET)
  if(known)
    get_property(result GLOBAL PROPERTY "perftune_torch_${file}")
    set(${out} ${result} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "perftune_torch_${file}" FALSE)  # a cycle ends here
  set(result FALSE)
  file(STRINGS ${file} lines REGEX "^#include")
  foreach(line ${lines})
    if(line MATCHES "^#include <torch/")
      set(result TRUE)
      break()
    endif()
    if(line MATCHES "^#include \"([^\"]+)\"")
      set(header ${CMAKE_SOURCE_DIR}/${CMAKE_MATCH_1})
      if(EXISTS ${header})  # generated headers (tuning_data.pb.h) live in the build tree
        perftune_includes_torch(${header} nested)
        if(nested)
          set(result TRUE)
          break()
        endif()
      endif()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "perftune_torch_${file}" ${result})
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# perftune_torch_pch(TARGET SOURCES...): with PERFTUNE_PCH, precompiles <torch/torch.h> once for
# TARGET and uses it only in the SOURCES that include torch. Measured with GCC 12 on this project's
# machine (docs/hardening.md, section 2): parsing torch.h costs ~15 CPU-s per source, building its
# PCH ~35 CPU-s, loading the 630 MB PCH ~4 CPU-s, so a source that does not need torch must not
# load it, and a target with fewer torch sources than PERFTUNE_TORCH_PCH_MIN_SOURCES gains nothing.
set(PERFTUNE_TORCH_PCH_MIN_SOURCES 3)  # 35 s build < n * (15 - 4) s saved from n = 3 on
function(perftune_torch_pch target)
  if(NOT PERFTUNE_PCH)
    return()
  endif()
  set(users)
  set(others)
  foreach(source ${ARGN})
    perftune_includes_torch(${source} uses)
    if(uses)
      list(APPEND users ${source})
    else()
      list(APPEND others ${source})
    endif()
  endforeach()
  list(LENGTH users count)
  if(count LESS PERFTUNE_TORCH_PCH_MIN_SOURCES)
    return()
  endif()
  if(others)
    set_source_files_properties(${others} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  target_precompile_headers(${target} PRIVATE <torch/torch.h>)
endfunction()

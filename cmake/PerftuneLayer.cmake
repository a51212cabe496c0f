# perftune_layer(NAME DEPS ...): a static library made of every .cpp in the calling folder.
# Globbing (with CONFIGURE_DEPENDS) keeps "one concept per file" cheap: adding a file needs no edit here.
function(perftune_layer name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT sources)
    set(sources ${CMAKE_SOURCE_DIR}/cmake/empty.cpp)
  endif()
  add_library(${name} STATIC ${sources} ${PERFTUNE_LAYER_EXTRA_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARGN})
endfunction()

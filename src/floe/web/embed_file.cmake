# cmake -DIN=file -DOUT=file.cc -DSYMBOL=name -P embed_file.cmake: `IN`'s bytes as the C string
# floe::web::SYMBOL, so the web UI is served from the binary (no files to install, no network).
file(READ "${IN}" content)
string(FIND "${content}" ")floe_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )floe_embed\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by embed_file.cmake.\nnamespace floe::web {\nextern const char ${SYMBOL}[];\nconst char ${SYMBOL}[] = R\"floe_embed(${content})floe_embed\";\n}  // namespace floe::web\n")
file(RENAME "${OUT}.tmp" "${OUT}")

/* A shared library that is not a moe-harness plugin (no moe_plugin_entry). */
int some_other_library_function(int x) { return x + 1; }

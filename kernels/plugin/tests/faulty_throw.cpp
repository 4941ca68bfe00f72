// The C++ half of the faulty plugin that throws (faulty_plugin.c, FAULT_KIND 5): an exception leaving run().
#include <stdexcept>

extern "C" void faulty_plugin_throw() { throw std::runtime_error("faulty plugin: an exception escaped run()"); }

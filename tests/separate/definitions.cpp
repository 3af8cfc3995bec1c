// The one TU that compiles brook's heavy classes for this program.
#include <brook/src.hpp>

// Stand-ins for dbcppp's DBC-to-text converters (src/Network2C.cpp, Network2DBC.cpp and
// Network2Human.cpp), which only the dbcppp tool's `dbc2` subcommand uses. They let the tool's
// upstream tools/dbcppp/main.cpp be built unchanged when those three files are not at hand; the
// `decode` subcommand, the one timed here, never calls them.
#include <cstdio>
#include <cstdlib>

#include "dbcppp/Network2Functions.h"

namespace {
[[noreturn]] void missing(const char* what) {
    std::fprintf(stderr, "dbcppp: %s is not built in (dbc2 is left out of this build)\n", what);
    std::abort();
}
}  // namespace

std::ostream& dbcppp::Network2C::operator<<(std::ostream&, const INetwork&) { missing("Network2C"); }
std::ostream& dbcppp::Network2DBC::operator<<(std::ostream&, const INetwork&) { missing("Network2DBC"); }
std::ostream& dbcppp::Network2Human::operator<<(std::ostream&, const INetwork&) { missing("Network2Human"); }

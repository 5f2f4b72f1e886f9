// The `uscope` program: the command line itself is uscope_cli_main
// (tools/uscope_cli.cpp), a function so that the fuzz targets can call it.
#include "cli_main.hpp"

int main(int argc, char **argv) { return uscope_cli_main(argc, argv); }

// The uscope command line as a function (tools/uscope_cli.cpp), so that it
// runs both as the `uscope` program (tools/main.cpp) and in-process in the
// fuzz targets (tests/fuzz/fuzz_cli_*.cpp), which call it many times.
#pragma once

// Parses argv (argv[0] is the program name) and runs one subcommand. Returns
// the exit status: 0 success, 1 error (message on stderr), 2 usage error.
// Never calls exit(); writes only to stdout, stderr and the files named.
int uscope_cli_main(int argc, char **argv);

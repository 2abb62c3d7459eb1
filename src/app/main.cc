#include "app/cli.h"

int main(int argc, char** argv) { return eddy::app::run_cli(argc, argv); }

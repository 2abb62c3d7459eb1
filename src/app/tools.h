// The client tools of the eddy command, each taking the arguments after its
// subcommand name and returning the process exit code (app/cli.h).
#pragma once

#include <string>
#include <vector>

namespace eddy::app {

int run_topics(const std::vector<std::string>& args);   // eddy topics
int run_produce(const std::vector<std::string>& args);  // eddy produce
int run_consume(const std::vector<std::string>& args);  // eddy consume
int run_users(const std::vector<std::string>& args);    // eddy users (SCRAM credentials)
int run_forward(const std::vector<std::string>& args);  // eddy forward (control socket of a running eddy)

}  // namespace eddy::app

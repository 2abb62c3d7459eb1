// The store-and-forward links of a broker configuration (eddy.forward.*).
#pragma once

#include <string>
#include <vector>

#include "app/config.h"
#include "forward/link_options.h"

namespace eddy::app {

// Every link named in eddy.forward.links with its eddy.forward.<link>.*
// keys. kInvalidArgument ("origin: key: why") for a key of an unlisted
// link, a missing bootstrap.servers, a bad pattern or remote topic name.
Status forward_links_from(const Config& config, std::vector<forward::LinkOptions>* out);

}  // namespace eddy::app

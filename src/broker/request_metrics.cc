#include "broker/request_metrics.h"

namespace eddy::broker {

RequestMetrics::RequestMetrics(const std::vector<int16_t>& api_keys) : slots_(api_keys.size() + 1) {
  // At most 254 keys get a slot of their own; slot_of_ holds uint8_t.
  for (size_t i = 0; i < api_keys.size() && i < 254; ++i) slots_[i].api_key = api_keys[i];
  slot_of_.fill(static_cast<uint8_t>(slots_.size() - 1));
  for (size_t i = 0; i < api_keys.size() && i < 254; ++i) {
    if (api_keys[i] >= 0 && static_cast<size_t>(api_keys[i]) < slot_of_.size()) {
      slot_of_[static_cast<size_t>(api_keys[i])] = static_cast<uint8_t>(i);
    }
  }
}

}  // namespace eddy::broker

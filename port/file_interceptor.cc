#include "port/file_interceptor.h"

#include <atomic>

namespace eddy::port {
namespace {

std::atomic<FileInterceptor*> g_interceptor{nullptr};

}  // namespace

void set_file_interceptor(FileInterceptor* interceptor) { g_interceptor.store(interceptor, std::memory_order_release); }

FileInterceptor* file_interceptor() { return g_interceptor.load(std::memory_order_acquire); }

}  // namespace eddy::port

// Offload: runs a blocking call (a remote backend's network round trip) on a worker pool while
// the connection's coroutine waits, so that no I/O thread ever blocks on a remote.
//
// The completion is posted back to the coroutine's own executor: each I/O thread runs its own
// single-threaded io_context (http/server.h), so the check of `result` and the wait below cannot
// race with the completion handler.
//
// Pass a named std::function, never a lambda written inside the co_await expression: GCC 12
// destroys such a temporary twice (the same coroutine bug as in http/server.cc's guard).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "archive/worker_pool.h"
#include "http/asio.h"
#include "util/status.h"

namespace ais {

template <typename T>
Task<Result<T>> Offload(WorkerPool& pool, std::function<Result<T>()> fn) {
  auto exec = co_await asio::this_coro::executor;
  struct State {
    explicit State(const asio::any_io_executor& e) : timer(e, asio::steady_timer::time_point::max()) {}
    std::optional<Result<T>> result;
    asio::steady_timer timer;
  };
  auto state = std::make_shared<State>(exec);
  bool queued = pool.Run([state, exec, fn = std::move(fn)] {
    Result<T> r = fn();
    asio::post(exec, [state, r = std::move(r)]() mutable {
      state->result.emplace(std::move(r));
      state->timer.cancel();
    });
  });
  if (!queued) co_return Status::TooManyRequests("too many requests waiting for disk or network work on worker threads; try again");
  while (!state->result) {
    boost::system::error_code ec;
    co_await state->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return std::move(*state->result);
}

// The same for a call that returns only a Status.
inline Task<Status> OffloadStatus(WorkerPool& pool, std::function<Status()> fn) {
  std::function<Result<bool>()> call = [fn = std::move(fn)]() -> Result<bool> {
    Status st = fn();
    if (!st.ok()) return st;
    return true;
  };
  auto r = co_await Offload<bool>(pool, std::move(call));
  co_return r.status();
}

}  // namespace ais

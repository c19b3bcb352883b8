// Replied and Handled: what a request handler returns, so that an error reply has one path.
//
// A handler either replies itself (every Exchange reply call yields a Replied, and nothing else
// can make one), or returns the error Status and the router replies with it (Dispatch in
// router/router.cc). A reply that has begun to stream is ended by its StreamReply, whose End
// yields a Replied: past a streamed reply's first byte, no Status reaches the error path.
#pragma once

#include <utility>

#include "util/status.h"

namespace ais {

class Exchange;
class StreamReply;

// Proof that the exchange's reply went out (or was attempted: a peer that went away is no
// business of the caller). Only Exchange and StreamReply make one.
class Replied {
 private:
  friend class Exchange;
  friend class StreamReply;
  Replied() = default;
};

// The outcome of a handler: replied, or an error not yet replied (the router replies with it).
class Handled {
 public:
  Handled(Replied) {}  // NOLINT: implicit by design, `co_return co_await ex.Reply(...)`
  // REQUIRES: !st.ok(). An OK status here is a handler that never replied: a 500.
  Handled(Status st)  // NOLINT: implicit by design, `co_return st`
      : status_(st.ok() ? Status::IOError("internal error: a handler returned OK without a reply") : std::move(st)) {}

  bool replied() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  Status status_;  // OK: replied
};

}  // namespace ais

// One include for Boost.Asio/Beast with the aliases the server uses.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast.hpp>

namespace ais {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

template <typename T = void>
using Task = asio::awaitable<T>;

}  // namespace ais

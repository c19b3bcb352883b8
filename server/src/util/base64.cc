#include "util/base64.h"

#include <openssl/evp.h>

namespace ais {

std::optional<std::string> DecodeBase64(std::string_view in) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return std::nullopt;
  // OpenSSL decodes the standard alphabet, padded: the URL-safe one is mapped to it first. A
  // character outside both stays invalid (EVP_DecodeBlock then fails).
  std::string padded(in);
  for (char& c : padded) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (c == '=' || c == ' ' || c == '\t' || c == '\r' || c == '\n') return std::nullopt;  // OpenSSL skips these
  }
  const size_t pad = (4 - padded.size() % 4) % 4;
  padded.append(pad, '=');
  std::string out(padded.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(padded.data()), static_cast<int>(padded.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<size_t>(n) - pad);  // the block coder counts the padding's zero bytes
  return out;
}

std::string EncodeBase64(std::string_view in) {
  std::string out((in.size() + 2) / 3 * 4 + 1, '\0');  // + the NUL it writes
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace ais

#include "security/scram_client.h"

#include <charconv>
#include <vector>

#include "security/random.h"
#include "security/scram_syntax.h"

namespace eddy::security {
namespace {

// 18 random bytes give 24 base64 characters, none of them '=' or ','.
constexpr size_t kClientNonceBytes = 18;

Bytes xor_bytes(const Bytes& a, const Bytes& b) {
  Bytes out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = static_cast<uint8_t>(a[i] ^ b[i]);
  return out;
}

}  // namespace

std::string encode_saslname(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

ScramClient::ScramClient(ScramMechanism mechanism, std::string user, std::string password)
    : mechanism_(mechanism), user_(std::move(user)), password_(std::move(password)) {}

Status ScramClient::fail(std::string reason) {
  state_ = State::kDone;
  password_.clear();
  return Status::invalid_argument(std::string(mechanism()) + ": " + std::move(reason));
}

Status ScramClient::client_first(std::string* out) {
  if (state_ != State::kStart) return fail("client-first asked for twice");
  if (user_.empty()) return fail("empty user name");
  if (nonce_.empty()) {
    Bytes random(kClientNonceBytes);
    if (Status s = random_bytes(random.data(), random.size()); !s.ok()) return s;
    nonce_ = base64_encode(random);
  }
  client_first_bare_ = "n=" + encode_saslname(user_) + ",r=" + nonce_;
  *out = "n,," + client_first_bare_;
  state_ = State::kSentFirst;
  return Status();
}

Status ScramClient::client_final(std::string_view server_first, std::string* out) {
  if (state_ != State::kSentFirst) return fail("server-first out of order");
  if (server_first.starts_with("e=")) return fail("server refused: " + std::string(server_first.substr(2)));
  if (server_first.starts_with("m=")) return fail("server-first has a mandatory extension");
  const std::vector<std::string_view> attrs = scram_attributes(server_first);
  if (attrs.size() < 3 || !attrs[0].starts_with("r=") || !attrs[1].starts_with("s=") ||
      !attrs[2].starts_with("i=")) {
    return fail("server-first is not r=NONCE,s=SALT,i=ITERATIONS");
  }
  const std::string_view nonce = attrs[0].substr(2);
  if (!valid_scram_nonce(nonce) || nonce.size() <= nonce_.size() || !nonce.starts_with(nonce_)) {
    return fail("server nonce does not extend the client nonce");
  }
  Bytes salt;
  if (!base64_decode(attrs[1].substr(2), &salt) || salt.empty()) return fail("server-first has a bad salt");
  const std::string_view count = attrs[2].substr(2);
  int64_t iterations = 0;
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), iterations);
  if (ec != std::errc() || end != count.data() + count.size()) return fail("server-first has a bad iteration count");
  if (iterations < kMinScramIterations || iterations > kMaxScramIterations) {
    return fail("iteration count " + std::string(count) + " outside [" + std::to_string(kMinScramIterations) + ", " +
                std::to_string(kMaxScramIterations) + "]");
  }
  const HashAlgorithm h = scram_hash(mechanism_);
  Bytes salted;
  Status s = pbkdf2(h, password_, salt, static_cast<uint32_t>(iterations), &salted);
  password_.clear();
  if (!s.ok()) return fail(s.message());
  const std::string without_proof = "c=biws,r=" + std::string(nonce);
  const std::string auth_message = client_first_bare_ + "," + std::string(server_first) + "," + without_proof;
  const Bytes client_key = hmac(h, salted, "Client Key");
  const Bytes client_signature = hmac(h, hash(h, client_key), auth_message);
  expected_server_signature_ = hmac(h, hmac(h, salted, "Server Key"), auth_message);
  *out = without_proof + ",p=" + base64_encode(xor_bytes(client_key, client_signature));
  state_ = State::kSentFinal;
  return Status();
}

Status ScramClient::verify_server_final(std::string_view server_final) {
  if (state_ != State::kSentFinal) return fail("server-final out of order");
  if (server_final.starts_with("e=")) return fail("server refused: " + std::string(server_final.substr(2)));
  const std::vector<std::string_view> attrs = scram_attributes(server_final);
  Bytes signature;
  if (!attrs[0].starts_with("v=") || !base64_decode(attrs[0].substr(2), &signature)) {
    return fail("server-final is not v=SIGNATURE");
  }
  if (!constant_time_equal(signature, expected_server_signature_)) {
    return fail("server signature does not verify (the server does not know this user's credential)");
  }
  state_ = State::kDone;
  return Status();
}

}  // namespace eddy::security

#include "security/tls_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <mbedtls/x509_crt.h>

#include "security/x509_principal.h"
#include "test_pem.h"

namespace eddy::security {
namespace {

class TlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tls_config_test_" + std::to_string(::getpid());
    std::string cmd = "mkdir -p " + dir_;
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  TlsSettings keystore_file(const std::string& key = test_pem::kServerKey) {
    TlsSettings s;
    s.keystore_location = write("server.pem", std::string(test_pem::kServerCert) + key);
    return s;
  }
  Status create(const TlsSettings& s) {
    std::shared_ptr<const TlsContext> out;
    Status st = TlsContext::create_server(s, &out);
    if (st.ok()) EXPECT_NE(out, nullptr);
    return st;
  }
  std::string dir_;
};

TEST_F(TlsConfigTest, KeystoreFileWithChainAndKey) {
  TlsSettings s = keystore_file();
  std::shared_ptr<const TlsContext> ctx;
  ASSERT_TRUE(TlsContext::create_server(s, &ctx).ok());
  EXPECT_NE(ctx->ssl_config(), nullptr);
  EXPECT_EQ(ctx->client_auth(), ClientAuth::kNone);
  EXPECT_EQ(ctx->description(), tls13_available() ? "TLSv1.2, TLSv1.3" : "TLSv1.2");
}

TEST_F(TlsConfigTest, InlinePemOnOneLineAsAPropertiesContinuationLeavesIt) {
  TlsSettings s;
  auto one_line = [](std::string text) {
    for (char& c : text) {
      if (c == '\n') c = ' ';
    }
    return text;
  };
  s.keystore_certificate_chain = one_line(test_pem::kServerCert);
  s.keystore_key = one_line(test_pem::kServerKey);
  EXPECT_TRUE(create(s).ok()) << create(s).message();
  s.keystore_key.clear();
  EXPECT_NE(create(s).message().find("ssl.keystore.key is not"), std::string::npos);
}

TEST_F(TlsConfigTest, MissingFileNamesTheKeyAndTheFile) {
  TlsSettings s;
  s.keystore_location = dir_ + "/no-such.pem";
  Status st = create(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ssl.keystore.location " + dir_ + "/no-such.pem"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("No such file"), std::string::npos) << st.message();
  EXPECT_NE(create(TlsSettings()).message().find("must be set"), std::string::npos);
}

TEST_F(TlsConfigTest, BadPem) {
  TlsSettings s;
  s.keystore_location = write("garbage.pem", "hello\n");
  EXPECT_NE(create(s).message().find("not a PEM file"), std::string::npos);
  std::string broken = test_pem::kServerCert;
  broken[60] = '*';
  s.keystore_location = write("broken.pem", broken + test_pem::kServerKey);
  Status st = create(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bad certificate"), std::string::npos) << st.message();
  s.keystore_location = write("nokey.pem", test_pem::kServerCert);
  EXPECT_NE(create(s).message().find("bad private key"), std::string::npos) << create(s).message();
}

TEST_F(TlsConfigTest, KeyThatDoesNotMatchTheCertificate) {
  Status st = create(keystore_file(test_pem::kOtherKey));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("does not match the certificate"), std::string::npos) << st.message();
}

TEST_F(TlsConfigTest, EncryptedKeyNeedsTheRightPassword) {
  TlsSettings s = keystore_file(test_pem::kServerKeyEncrypted);
  EXPECT_NE(create(s).message().find("ssl.key.password is not set"), std::string::npos) << create(s).message();
  s.key_password = "wrong";
  EXPECT_NE(create(s).message().find("does not decrypt"), std::string::npos) << create(s).message();
  s.key_password = "secret";
  EXPECT_TRUE(create(s).ok()) << create(s).message();
}

TEST_F(TlsConfigTest, ClientAuthNeedsATruststore) {
  TlsSettings s = keystore_file();
  s.client_auth = ClientAuth::kRequired;
  EXPECT_NE(create(s).message().find("ssl.truststore.location is not set"), std::string::npos);
  s.truststore_location = write("ca.pem", test_pem::kCa);
  EXPECT_TRUE(create(s).ok());
  s.truststore_location = write("bad-ca.pem", test_pem::kServerKey);
  EXPECT_NE(create(s).message().find("ssl.truststore.location"), std::string::npos) << create(s).message();
}

TEST_F(TlsConfigTest, ProtocolList) {
  TlsSettings s = keystore_file();
  s.enabled_protocols = {"TLSv1.2"};
  EXPECT_TRUE(create(s).ok());
  s.enabled_protocols = {"TLSv1.3"};
  EXPECT_EQ(create(s).ok(), tls13_available()) << create(s).message();
  s.enabled_protocols = {"TLSv1.1"};
  EXPECT_FALSE(create(s).ok());
  s.enabled_protocols = {"TLSv9"};
  EXPECT_NE(create(s).message().find("unknown protocol 'TLSv9'"), std::string::npos);
  s.key_prefix = "listener.name.ssl.";
  EXPECT_NE(create(s).message().find("listener.name.ssl.ssl.enabled.protocols"), std::string::npos);
}

TEST_F(TlsConfigTest, CipherSuiteNames) {
  EXPECT_NE(cipher_suite_id("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), 0);
  EXPECT_EQ(cipher_suite_id("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), 0xC02F);  // IANA's number
  EXPECT_EQ(cipher_suite_id("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"), 0xC02C);
  EXPECT_EQ(cipher_suite_id("TLS_NO_SUCH_SUITE"), 0);
  EXPECT_TRUE(is_tls13_cipher_suite("TLS_AES_128_GCM_SHA256"));
  TlsSettings s = keystore_file();
  s.cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"};
  EXPECT_TRUE(create(s).ok()) << create(s).message();
  s.cipher_suites = {"TLS_NO_SUCH_SUITE"};
  EXPECT_NE(create(s).message().find("'TLS_NO_SUCH_SUITE'"), std::string::npos);
}

TEST(X509PrincipalTest, SubjectInRfc2253OrderWithEscapes) {
  mbedtls_x509_crt crt;
  mbedtls_x509_crt_init(&crt);
  std::string pem = test_pem::kServerCert;
  ASSERT_EQ(mbedtls_x509_crt_parse(&crt, reinterpret_cast<const unsigned char*>(pem.c_str()), pem.size() + 1), 0);
  // The certificate says C=DE, O=Eddy, Inc., CN=localhost.
  EXPECT_EQ(rfc2253_name(&crt.subject), "CN=localhost,O=Eddy\\, Inc.,C=DE");
  mbedtls_x509_crt_free(&crt);
}

}  // namespace
}  // namespace eddy::security

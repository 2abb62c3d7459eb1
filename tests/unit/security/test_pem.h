// Test-only PEM material (EC P-256, valid until 2125), made once with
// openssl: a CA, a server certificate it signed (subject C=DE, O="Eddy,
// Inc.", CN=localhost), the server's key plain and encrypted (PKCS#8,
// 3DES, PBKDF2 with HMAC-SHA1: what mbedTLS 2.28
// reads; password "secret"), and an unrelated key.
#pragma once

namespace eddy::security::test_pem {

inline constexpr const char* kCa = R"PEM(-----BEGIN CERTIFICATE-----
MIIBhTCCASugAwIBAgIUY8cy3m58hjfaPiMilJUkOSp9r84wCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMRWRkeSBVbml0IENBMCAXDTI2MTIwMjA0NDAyN1oYDzIxMjYx
MTA4MDQ0MDI3WjAXMRUwEwYDVQQDDAxFZGR5IFVuaXQgQ0EwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAATqoDbBkBP2OFQ1tbyFEsPypTaRMnCLu9KwljSWZG1xqBb+
knaSZQruHmX7ZXiwjrb4zDBQYUe1sdfB16rvsG7zo1MwUTAdBgNVHQ4EFgQUpfvv
+lVRtNa3JhFhWfOuoXn2r/QwHwYDVR0jBBgwFoAUpfvv+lVRtNa3JhFhWfOuoXn2
r/QwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEAoGoWKImDB4yH
PWexpNpCKzC2S+CywV9VeqdcRV3DRvECIFRPPSZ42AifVsv967n63bvDV3sj1Aa7
aknSUAqdXs9w
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* kServerCert = R"PEM(-----BEGIN CERTIFICATE-----
MIIBSjCB8AIUHSxovrl/sofcRs9wLm3kF8qZLDQwCgYIKoZIzj0EAwIwFzEVMBMG
A1UEAwwMRWRkeSBVbml0IENBMCAXDTI2MTIwMjA0NDAyN1oYDzIxMjYxMTA4MDQ0
MDI3WjA2MQswCQYDVQQGEwJERTETMBEGA1UECgwKRWRkeSwgSW5jLjESMBAGA1UE
AwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdFiym03zyZyZ
++ic8UUEY+Xb88/w3878N5DAeKD+PE/cTAA/NPaBeNvMcWjY0mrdXPvPjHv0hyLh
/63qbO5ihTAKBggqhkjOPQQDAgNJADBGAiEA2niIpqGtSRc+BnDz3xffyNNeEGxr
TJ1tLeHrHjTNYTACIQCjcECo85ntiZ+gvI9IJtImTdo8Q+qGuNX8mblDKQDl7A==
-----END CERTIFICATE-----
)PEM";
inline constexpr const char* kServerKey = R"PEM(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg68Q44Ays/h92DYAj
OmEc7NaevSy6AYp/QClIbWQy/NihRANCAAR0WLKbTfPJnJn76JzxRQRj5dvzz/Df
zvw3kMB4oP48T9xMAD809oF428xxaNjSat1c+8+Me/SHIuH/reps7mKF
-----END PRIVATE KEY-----
)PEM";
inline constexpr const char* kServerKeyEncrypted = R"PEM(-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHVMEAGCSqGSIb3DQEFDTAzMBsGCSqGSIb3DQEFDDAOBAiY0ECeeI9H2wICCAAw
FAYIKoZIhvcNAwcECGNWH93atf3PBIGQzzI9MHruy0s6qp+idsp5q5cgjO1OB24C
JFLXbJT/qD2GcXPQKkPQMQTA2VFdeQfrfbau+7CAF+jwNnYe1c2Vg8LtJCaJQwbY
xaQnCsLcM49Kp8deuyxl9JdKtnZn0YMZgHjpW5jBYtUy/E6jLhaMw0yIgDFemqnc
mxhDc532z3syTLYPjcmzx+o1o0S3E51E
-----END ENCRYPTED PRIVATE KEY-----
)PEM";
inline constexpr const char* kOtherKey = R"PEM(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjAFfWP7k0RdaQ0Te
II5X6CG8b0jqYWDKZS7CG1XelGihRANCAAS7KRH6JrZyCAVhPk69mIdnc0pPWbGy
gSOfC3av6Hv6Z4lf4jew+Wsz5nhRR9sGntuCCYmaabBDcBlWEjfGXGjR
-----END PRIVATE KEY-----
)PEM";

}  // namespace eddy::security::test_pem

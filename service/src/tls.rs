//! TLS for outgoing HTTPS (marker APIs, S3 endpoints): rustls with the ring provider and the
//! system's certificate store. Every HTTP client of the crate starts from [`client_builder`],
//! which installs the provider for the process first (once; later calls change nothing).

/// Installs ring as the process's TLS provider, if none is installed yet.
pub fn install_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A `reqwest` client builder, with the TLS provider installed.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_provider();
    reqwest::Client::builder()
}

/// A `reqwest` client with default settings, with the TLS provider installed.
pub fn client() -> reqwest::Client {
    client_builder().build().unwrap_or_default()
}

//! IPsec: an ESP tunnel gateway (RFC 4303) with AES-GCM-128 (RFC 4106) or AES-128-CBC with
//! HMAC-SHA1-96 (RFC 3602, RFC 2404), security associations configured statically and keys
//! read from files.

use sluice_core::ElementClass;

mod esp_decap;
mod esp_encap;
pub mod replay;
pub mod sa;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[esp_decap::CLASS, esp_encap::CLASS];

//! Launch manifests.

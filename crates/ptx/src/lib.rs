//! ptx

//! Consistent identifier anonymization of C, C++ and Java sources.

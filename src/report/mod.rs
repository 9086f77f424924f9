//! Renderers: bytes out, no writing.

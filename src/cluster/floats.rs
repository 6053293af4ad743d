//! Vectors of `f32` on the wire as base64 of their little-endian bytes: exact, and a third
//! the size of decimal text, which a query's node vectors (a few hundred KB as text) make
//! worth it.

use serde::{Deserialize, Deserializer, Serializer};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn encode(v: &[f32]) -> String {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub fn decode(s: &str) -> Result<Vec<f32>, String> {
    let mut val = [0u8; 256];
    for (i, &c) in ALPHABET.iter().enumerate() {
        val[c as usize] = i as u8 + 1;
    }
    let s = s.trim_end_matches('=').as_bytes();
    let mut bytes = Vec::with_capacity(s.len() * 3 / 4);
    for c in s.chunks(4) {
        let mut n = 0u32;
        for (i, &b) in c.iter().enumerate() {
            let v = val[b as usize];
            if v == 0 {
                return Err(format!("{:?} is not base64", b as char));
            }
            n |= u32::from(v - 1) << (18 - 6 * i);
        }
        for i in 0..c.len().saturating_sub(1) {
            bytes.push((n >> (16 - 8 * i)) as u8);
        }
    }
    if bytes.len() % 4 != 0 {
        return Err(format!("{} bytes are not whole f32 values", bytes.len()));
    }
    Ok(bytes.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&encode(v))
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
    let s = String::deserialize(d)?;
    decode(&s).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_is_exact() {
        for n in 0..7 {
            let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37 - 1.0) / 3.0).chain([f32::MIN_POSITIVE, -0.0, 1e-30]).collect();
            let back = super::decode(&super::encode(&v)).unwrap();
            assert_eq!(v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), back.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        assert!(super::decode("a?").is_err());
        assert!(super::decode("AAA").is_err(), "two bytes are not an f32");
    }
}

//! The integration keys: what seals the providers' API keys before they reach the database
//! (XChaCha20-Poly1305, an AEAD, with a random 192-bit nonce per seal), so that a copy of the
//! database (a backup, a replica) holds no usable key. A keyring is a list of 256-bit keys,
//! one per line in base64: the first seals, every one opens what it sealed, which is how a key
//! is rotated (a new key first, the old one after it, then `llmtool integration rotate`).
//!
//! A sealed key is `v1.ID.BASE64`, where ID names the key that sealed it (the first eight hex
//! digits of its SHA-256) and BASE64 is the nonce and the ciphertext; the integration's name is
//! bound in as associated data, so a sealed key moved to another integration does not open.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead as _, KeyInit as _, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::{RngCore as _, SeedableRng as _};
use sha2::{Digest as _, Sha256};
use zeroize::Zeroizing;

/// The environment variable that may hold the keyring (keys split by commas or lines).
pub const KEYRING_VARIABLE: &str = "LLMTOOL_INTEGRATION_KEYS";

const VERSION: &str = "v1";
const NONCE_BYTES: usize = 24;

/// Why a keyring or a sealed key is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyringError {
    #[error(
        "the integration keys: line {0} is not a key (32 bytes in base64: `llmtool integration keygen` makes one)"
    )]
    BadKey(usize),
    #[error("the integration keys hold no key")]
    Empty,
    #[error(
        "this key was sealed with the integration key {0}, which the server does not have: add it to the keyring (after the current one)"
    )]
    UnknownKey(String),
    #[error(
        "a sealed key does not open: it was changed, moved to another integration, or is not one"
    )]
    Broken,
}

/// The server's integration keys, the first one current.
pub struct Keyring {
    keys: Vec<(String, Zeroizing<[u8; 32]>)>,
}

impl std::fmt::Debug for Keyring {
    /// The keys' ids, never the keys.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("Keyring").field("ids", &ids).finish()
    }
}

impl Keyring {
    /// The keyring of `text`: keys in base64, one a line (or split by commas); blank lines
    /// and lines from `#` on are left out.
    pub fn parse(text: &str) -> Result<Keyring, KeyringError> {
        let mut keys = Vec::new();
        let lines = text.lines().flat_map(|line| line.split(','));
        for (number, line) in lines.enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let bytes = Zeroizing::new(
                STANDARD.decode(line).map_err(|_| KeyringError::BadKey(number + 1))?,
            );
            let key: [u8; 32] =
                bytes.as_slice().try_into().map_err(|_| KeyringError::BadKey(number + 1))?;
            let id = hex::encode(&Sha256::digest(key)[..4]);
            keys.push((id, Zeroizing::new(key)));
        }
        if keys.is_empty() {
            return Err(KeyringError::Empty);
        }
        Ok(Keyring { keys })
    }

    /// A new key from the operating system's random source, in base64.
    pub fn new_key() -> String {
        let mut key = Zeroizing::new([0u8; 32]);
        rand::rngs::StdRng::from_os_rng().fill_bytes(key.as_mut());
        STANDARD.encode(key.as_ref())
    }

    /// The id of the key that seals.
    pub fn current(&self) -> &str {
        &self.keys[0].0
    }

    /// `secret` sealed with the current key, bound to `context` (the integration's name).
    pub fn seal(&self, secret: &str, context: &str) -> String {
        let (id, key) = &self.keys[0];
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::StdRng::from_os_rng().fill_bytes(&mut nonce);
        let cipher = XChaCha20Poly1305::new(key.as_ref().into());
        let payload = Payload { msg: secret.as_bytes(), aad: context.as_bytes() };
        // Encrypting a message in memory fails only past 256 GiB.
        let sealed = cipher.encrypt(XNonce::from_slice(&nonce), payload).unwrap_or_default();
        let mut whole = nonce.to_vec();
        whole.extend(sealed);
        format!("{VERSION}.{id}.{}", STANDARD.encode(whole))
    }

    /// The secret `sealed` holds, if one of the keys sealed it for `context`.
    pub fn open(&self, sealed: &str, context: &str) -> Result<Zeroizing<String>, KeyringError> {
        let mut parts = sealed.splitn(3, '.');
        let (Some(VERSION), Some(id), Some(body)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(KeyringError::Broken);
        };
        let Some((_, key)) = self.keys.iter().find(|(known, _)| known == id) else {
            return Err(KeyringError::UnknownKey(id.to_owned()));
        };
        let whole = STANDARD.decode(body).map_err(|_| KeyringError::Broken)?;
        if whole.len() < NONCE_BYTES {
            return Err(KeyringError::Broken);
        }
        let (nonce, message) = whole.split_at(NONCE_BYTES);
        let cipher = XChaCha20Poly1305::new(key.as_ref().into());
        let payload = Payload { msg: message, aad: context.as_bytes() };
        let opened = Zeroizing::new(
            cipher.decrypt(XNonce::from_slice(nonce), payload).map_err(|_| KeyringError::Broken)?,
        );
        let text = std::str::from_utf8(&opened).map_err(|_| KeyringError::Broken)?;
        Ok(Zeroizing::new(text.to_owned()))
    }

    /// Whether `sealed` was sealed with the current key (else a rotation reseals it).
    pub fn is_current(&self, sealed: &str) -> bool {
        sealed.split('.').nth(1) == Some(self.current())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_key_opens_only_with_its_key_and_its_integration() {
        let (old, new) = (Keyring::new_key(), Keyring::new_key());
        let before = Keyring::parse(&old).unwrap();
        let sealed = before.seal("sk-secret-1234", "openai");
        assert!(!sealed.contains("sk-secret"), "{sealed}");
        assert_eq!(before.open(&sealed, "openai").unwrap().as_str(), "sk-secret-1234");
        assert_eq!(before.open(&sealed, "anthropic"), Err(KeyringError::Broken));
        // Two seals of one key differ (a fresh nonce each).
        assert_ne!(before.seal("sk-secret-1234", "openai"), sealed);
        // A tampered seal does not open.
        let mut tampered = sealed.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        assert!(before.open(&tampered, "openai").is_err());

        // Rotation: the new key first seals, the old one still opens what it sealed.
        let after = Keyring::parse(&format!("# rotated\n{new}\n{old}\n")).unwrap();
        assert!(before.is_current(&sealed) && !after.is_current(&sealed));
        assert_eq!(after.open(&sealed, "openai").unwrap().as_str(), "sk-secret-1234");
        let resealed = after.seal("sk-secret-1234", "openai");
        assert!(after.is_current(&resealed));
        assert!(matches!(before.open(&resealed, "openai"), Err(KeyringError::UnknownKey(_))));
        assert!(!format!("{after:?}").contains(&new));
    }

    #[test]
    fn a_keyring_is_keys_of_32_bytes() {
        assert_eq!(Keyring::parse("\n# none\n").unwrap_err(), KeyringError::Empty);
        assert_eq!(Keyring::parse("c2hvcnQ=").unwrap_err(), KeyringError::BadKey(1));
        let two = format!("{},{}", Keyring::new_key(), Keyring::new_key());
        assert_eq!(Keyring::parse(&two).unwrap().keys.len(), 2);
    }
}

//! Boxed slices and strings behind one pointer. A corpus holds millions of nodes, most of
//! them with no calls and, while an update runs, no text: a box's length beside its pointer
//! would be a fifth of every node, so the length lives in the allocation, and an empty one
//! allocates nothing.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// An owned `[T]` reached through one pointer to its length and then its elements.
pub struct Thin<T> {
    /// `None` when empty; else the allocation, its length first.
    ptr: Option<NonNull<usize>>,
    _owns: PhantomData<T>,
}

// SAFETY: a `Thin<T>` owns its elements as a `Box<[T]>` does.
unsafe impl<T: Send> Send for Thin<T> {}
// SAFETY: shared access hands out `&[T]` only.
unsafe impl<T: Sync> Sync for Thin<T> {}

impl<T> Thin<T> {
    /// The allocation of `len` elements, and where the elements start in it.
    fn layout(len: usize) -> (Layout, usize) {
        let items = Layout::array::<T>(len).expect("a slice's size fits in memory");
        let (layout, at) = Layout::new::<usize>().extend(items).expect("a slice's size fits in memory");
        (layout.pad_to_align(), at)
    }

    /// Where the elements start: after the length, at `T`'s alignment (as `layout` has it,
    /// whatever the length; a constant, since this is read on every access).
    const AT: usize = std::mem::size_of::<usize>().next_multiple_of(std::mem::align_of::<T>());

    fn items(&self) -> Option<(NonNull<T>, usize)> {
        let p = self.ptr?;
        // SAFETY: `p` is this value's allocation, which starts with the length.
        let len = unsafe { p.as_ptr().read() };
        let at = Self::AT;
        debug_assert_eq!(at, Self::layout(len).1);
        // SAFETY: the elements start `at` bytes into the same allocation.
        Some((unsafe { NonNull::new_unchecked(p.as_ptr().cast::<u8>().add(at).cast::<T>()) }, len))
    }

    pub fn new() -> Thin<T> {
        Thin { ptr: None, _owns: PhantomData }
    }

    pub fn as_slice(&self) -> &[T] {
        match self.items() {
            // SAFETY: `len` initialised elements live at `items` while `self` does.
            Some((items, len)) => unsafe { std::slice::from_raw_parts(items.as_ptr(), len) },
            None => &[],
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match self.items() {
            // SAFETY: as `as_slice`, borrowed uniquely through `&mut self`.
            Some((items, len)) => unsafe { std::slice::from_raw_parts_mut(items.as_ptr(), len) },
            None => &mut [],
        }
    }
}

impl<T> From<Vec<T>> for Thin<T> {
    fn from(mut v: Vec<T>) -> Thin<T> {
        let len = v.len();
        if len == 0 {
            return Thin::new();
        }
        let (layout, at) = Self::layout(len);
        // SAFETY: the layout has a nonzero size (it holds the length).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(p) = NonNull::new(raw.cast::<usize>()) else { alloc::handle_alloc_error(layout) };
        // SAFETY: the allocation has room for the length and then `len` elements at `at`;
        // the elements are moved out of `v`, which then forgets them and frees its buffer.
        unsafe {
            p.as_ptr().write(len);
            std::ptr::copy_nonoverlapping(v.as_ptr(), raw.add(at).cast::<T>(), len);
            v.set_len(0);
        }
        Thin { ptr: Some(p), _owns: PhantomData }
    }
}

impl<T> From<Box<[T]>> for Thin<T> {
    fn from(b: Box<[T]>) -> Thin<T> {
        Thin::from(b.into_vec())
    }
}

impl<T: Clone> From<&[T]> for Thin<T> {
    fn from(s: &[T]) -> Thin<T> {
        Thin::from(s.to_vec())
    }
}

impl<T> FromIterator<T> for Thin<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Thin<T> {
        Thin::from(it.into_iter().collect::<Vec<T>>())
    }
}

impl<T> Drop for Thin<T> {
    fn drop(&mut self) {
        if let Some((items, len)) = self.items() {
            let (layout, _) = Self::layout(len);
            // SAFETY: the elements are initialised and dropped once; the allocation was
            // made with this layout.
            unsafe {
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(items.as_ptr(), len));
                alloc::dealloc(self.ptr.expect("items came from it").as_ptr().cast::<u8>(), layout);
            }
        }
    }
}

impl<T> Default for Thin<T> {
    fn default() -> Thin<T> {
        Thin::new()
    }
}

impl<T: Clone> Clone for Thin<T> {
    fn clone(&self) -> Thin<T> {
        Thin::from(self.as_slice())
    }
}

impl<T> std::ops::Deref for Thin<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> std::ops::DerefMut for Thin<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Thin<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<T: PartialEq> PartialEq for Thin<T> {
    fn eq(&self, other: &Thin<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for Thin<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Thin<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h)
    }
}

impl<'a, T> IntoIterator for &'a Thin<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: Serialize> Serialize for Thin<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Thin<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Thin<T>, D::Error> {
        Vec::<T>::deserialize(d).map(Thin::from)
    }
}

/// An owned `str` behind one pointer ([`Thin`] bytes that are always UTF-8).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Text(Thin<u8>);

impl Text {
    pub fn as_str(&self) -> &str {
        // SAFETY: a `Text` is only made from a `str`'s bytes.
        unsafe { std::str::from_utf8_unchecked(self.0.as_slice()) }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Thin::from(s.as_bytes()))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Thin::from(s.into_bytes()))
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Text {
        Text::from(s.into_string())
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::from(s.as_str())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn one_pointer_wide_and_empty_without_allocating() {
        assert_eq!(std::mem::size_of::<Thin<String>>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Text>(), std::mem::size_of::<usize>());
        assert!(Thin::<u8>::from(Vec::new()).ptr.is_none());
        assert_eq!(&*Text::from(""), "");
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn nodes_and_sites_stay_small() {
        // What the whole tree's ten million nodes and four million sites cost each.
        assert_eq!(std::mem::size_of::<crate::graph::Node>(), 48);
        assert_eq!(std::mem::size_of::<crate::graph::CallSite>(), 16);
        assert_eq!(std::mem::size_of::<crate::graph::Parent>(), 4);
        use crate::graph::Parent;
        assert_eq!([Parent::of(Some(0)).get(), Parent::of(Some(7)).get(), Parent::of(None).get()], [Some(0), Some(7), None]);
        assert!(Parent::of(Some(3)) == Some(3) && Parent::default().is_none());
    }

    #[test]
    fn holds_what_it_was_made_of_and_drops_it_once() {
        let t = Text::from("a[i] = a[j] + 1;".to_string());
        assert_eq!(t.as_str(), "a[i] = a[j] + 1;");
        assert_eq!(t.clone(), t);
        assert_eq!(format!("{t:?}"), "\"a[i] = a[j] + 1;\"");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Text>(&json).unwrap(), t);

        // Elements wider than the length and with drop glue: each dropped exactly once.
        let live = Rc::new(());
        let v: Thin<(Rc<()>, [u64; 3])> = (0..5).map(|i| (live.clone(), [i; 3])).collect();
        assert_eq!(Rc::strong_count(&live), 6);
        assert_eq!(v.iter().map(|x| x.1[2]).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        let w = v.clone();
        assert_eq!(Rc::strong_count(&live), 11);
        drop(v);
        assert_eq!(Rc::strong_count(&live), 6);
        let mut w = w;
        w[0].1 = [9; 3];
        assert_eq!(w[0].1, [9; 3]);
        drop(w);
        assert_eq!(Rc::strong_count(&live), 1);
        let names: Thin<String> = vec!["sift".to_string(), "down".to_string()].into();
        assert_eq!(serde_json::to_string(&names).unwrap(), "[\"sift\",\"down\"]");
        assert_eq!(serde_json::from_str::<Thin<String>>("[\"sift\",\"down\"]").unwrap(), names);
    }
}

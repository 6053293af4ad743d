//! libtorch and FAISS load and compute inside `cargo test`.

#[test]
fn libtorch_multiplies() {
    tch::set_num_threads(1);
    assert_eq!(beryl::native::torch_matmul().unwrap(), [58., 64., 139., 154.]);
}

#[test]
fn faiss_finds_the_nearest_vector() {
    let (id, ip) = beryl::native::faiss_nearest([0.0, 0.9, 0.1, 0.0]).unwrap();
    assert_eq!(id, 1);
    assert!((ip - 0.9).abs() < 1e-6);
    let (id, _) = beryl::native::faiss_nearest([0.0, 0.0, 0.0, 1.0]).unwrap();
    assert_eq!(id, 3);
}

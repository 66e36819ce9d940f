fn main() {
    afl::fuzz!(|data: &[u8]| lnet_fuzz::routes(data));
}

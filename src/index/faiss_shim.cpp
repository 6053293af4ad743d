// What FAISS's C API leaves out and a mapped index needs.
#include <faiss/IndexIVF.h>
#include <faiss/invlists/OnDiskInvertedLists.h>

extern "C" {

// Turns off the read-ahead threads of an IVF index whose lists are mapped from its file
// (read with IO_FLAG_MMAP): FAISS starts them on every search to fault the probed lists
// in, which on a file in the page cache costs more CPU than the scan it prepares.
// Returns 1 when the index had mapped lists, 0 otherwise, -1 on a C++ exception.
int beryl_ivf_no_prefetch(void* index) {
    try {
        auto* ivf = dynamic_cast<faiss::IndexIVF*>(static_cast<faiss::Index*>(index));
        if (ivf == nullptr) {
            return 0;
        }
        auto* lists = dynamic_cast<faiss::OnDiskInvertedLists*>(ivf->invlists);
        if (lists == nullptr) {
            return 0;
        }
        lists->prefetch_nthread = 0;
        return 1;
    } catch (...) {
        return -1;
    }
}
}

// Device functions no compiler can inline: recursion (a tree walk, doubly
// recursive Fibonacci, a chain of frames each with its own local array) and
// calls through function pointers that differ from thread to thread.

struct Node {
    int left, right, val;
};

__device__ Node tree[7] = {{1, 2, 10}, {3, 4, 20}, {5, 6, 30}, {-1, -1, 1}, {-1, -1, 2}, {-1, -1, 3}, {-1, -1, 4}};

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ int tree_sum(const Node* t, int i) {
    if (i < 0) return 0;
    return t[i].val + tree_sum(t, t[i].left) + tree_sum(t, t[i].right);
}

// Each call has its own local array, which the callee reads through `up`.
__device__ int frames(const int* up, int d) {
    int mine[4];
    for (int k = 0; k < 4; k++) mine[k] = d * 10 + k;
    int below = d == 0 ? 0 : frames(mine, d - 1);
    return below + mine[d & 3] + (up ? up[d & 3] : 0);
}

typedef int (*op_t)(int, int);
__device__ int add_op(int a, int b) { return a + b; }
__device__ int mul_op(int a, int b) { return a * b; }
__device__ int max_op(int a, int b) { return a > b ? a : b; }
__device__ op_t ops[3] = {add_op, mul_op, max_op};

extern "C" __global__ void recursion(int* out, int extra_depth) {
    int t = threadIdx.x;
    out[4 * t + 0] = fib(t % 12);
    out[4 * t + 1] = tree_sum(tree, t % 7);
    out[4 * t + 2] = frames(nullptr, t % 5 + extra_depth);
    op_t f = ops[t % 3];
    out[4 * t + 3] = f(t, 3);
}

"""Writes t110.npz for diag.py on the CPU (run from the repository root after the cpu preset's build): the shared expert
of the case at seed 1, every stage of the NumPy vLLM-style member (panel_members.VllmStyle)."""
import os, sys, numpy as np
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0]=['build/cpu/python','kernels/panel']
import moe_harness
from panel_members import VllmStyle, _f32, _act
from panel_quant import quantize
from panel_weights import stored
from panel_formats import round_to
s=moe_harness.suite('nightly', filter=['qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T128/prefill/*'], seed=1)
c=list(s)[0]; sp=c.spec; fx=c.fixture()
m=VllmStyle(); m.flavor='fn'
x=_f32(fx['x']); q=sp['shared_quant']
t=110
print('x row amax', np.abs(x[t]).max(), 'norm', np.linalg.norm(x[t]), 'median|x|', np.median(np.abs(x[t])))
qa=quantize(x,q,m.formula)
v13,s13=stored(fx,'shared_','w13',0,q)
h=m._gemm(qa,v13,s13,'w13'); hb=round_to(h,'bf16')
print('h row norm', np.linalg.norm(h[t]), 'max', np.abs(h[t]).max())
z=round_to(_act(hb,sp,True),'bf16')
print('z row amax', np.abs(z[t]).max(), 'norm', np.linalg.norm(z[t]), 'sorted top', np.sort(np.abs(z[t]))[-5:])
print('z other rows amax median', np.median(np.abs(z).max(1)))
qz=quantize(z,q,m.formula)
print('z scale', qz.s[t], 'nonzero codes', np.count_nonzero(qz.v[t]), 'of', qz.v.shape[1])
v2,s2=stored(fx,'shared_','w2',0,q)
y=m._gemm(qz,v2,s2,'w2')
print('y row norm', np.linalg.norm(y[t]), 'median row norm', np.median(np.linalg.norm(y,axis=1)))
out=m.forward(fx,sp)
print('out row norm', np.linalg.norm(out[t]), 'median', np.median(np.linalg.norm(out,axis=1)))
# sensitivity: relative exact dot vs |a||w| sum for GEMM1 row t
ex=(qa.v[t].astype(np.float64)@v13.T.astype(np.float64)); ab=(np.abs(qa.v[t]).astype(np.float64)@np.abs(v13).T.astype(np.float64))
print('GEMM1 row t: median |dot|/sum|a w|', np.median(np.abs(ex)/ab))
np.savez(os.path.join(here, 't110.npz'), x=x, v13=v13, s13=s13[1], v2=v2, s2=s2[1], qav=qa.v, qas=qa.s, h=h, z=z, qzv=qz.v, qzs=qz.s, y=y, out=out)

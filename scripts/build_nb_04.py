"""Build notebooks/04_speculative_decoding.ipynb (run: python scripts/build_nb_04.py)."""

from nbbuild import build

cells = [
("md", r"""
# 04. 투기적 디코딩: 초안을 빨리 쓰고, 한 번에 검증하기

노트북 01-02에서 본 것처럼 **디코드 단계(decode phase)** 는 토큰을 하나씩 차례로 만듭니다. 토큰 하나마다 대상 모델 전체를 한 번 돌려야 하므로
긴 답일수록 기다림이 길어집니다. 두 번째 시드 글은 이 기다림을 줄이는 기술로 **투기적 디코딩(speculative decoding)** 을 소개합니다.
이 노트북에서는 진짜 (작은) 한국어 모델 두 개로 그것을 직접 돌려 봅니다.

**이 노트북을 마치면**
1. 초안 모델과 대상 모델이 한 라운드에서 무엇을 하는지 토큰 단위로 설명할 수 있습니다.
2. 출력이 대상 모델 혼자 만든 것과 왜 똑같은지(탐욕 디코딩) 또는 같은 분포인지(샘플링) 말할 수 있습니다.
3. 속도 향상을 식으로 예측하고 측정값과 비교해, 언제 이득이 크고 언제 작은지 가려낼 수 있습니다.

**용어**: 두 번째 시드 글의 "메인 모델"을 이 강좌에서는 **대상 모델(target model)** 이라고 부릅니다. 작고 빠른 쪽은 **초안 모델(draft model)** 입니다.
용어는 저장소의 `GLOSSARY.md`(용어집)를 따릅니다.
"""),
("code", r"""
import torch
import decodelab
from decodelab import speculative as spec
from decodelab.models import bundled
from decodelab.widgets.speculative import (rounds_html, metrics_html, speculative_explorer,
                                           speedup_figure, exactness_figure)
from IPython.display import HTML, display

torch.manual_seed(0)
pair = bundled()   # 패키지에 들어 있는 모델 쌍 (인터넷 없이 로컬 폴더에서 읽음; 작은 모델이라 torch 스레드 1개로 돌림: load_models 설명 참고)
target, draft, tok = pair.target, pair.draft, pair.tokenizer
n_t = sum(p.numel() for p in target.parameters())
n_d = sum(p.numel() for p in draft.parameters())
print(f"대상 모델(target model): 매개변수 {n_t / 1e6:.2f}M개, 층 {target.config.num_hidden_layers}개")
print(f"초안 모델(draft model):  매개변수 {n_d / 1e6:.2f}M개, 층 {draft.config.num_hidden_layers}개 (대상의 약 1/{n_t / n_d:.0f})")
"""),
("md", r"""
## 한 문장으로 이해하기

> **투기적 디코딩은 작고 빠른 초안 모델이 토큰 몇 개를 먼저 써 두면, 대상 모델이 그것을 한 번의 병렬 계산으로 검증해
> 맞는 데까지 받아들이는 방법입니다. 출력은 대상 모델 혼자 만든 것과 같고, 대상 모델을 부르는 횟수만 줄어듭니다.**

두 번째 시드 글의 비유를 그림으로 옮기면 이렇습니다. 초안 작가는 빨리 쓰지만 가끔 틀리고, 편집자는 느리지만 정확합니다.
편집자가 글을 처음부터 한 글자씩 직접 쓰는 대신, 초안 몇 단어를 **한 번에 훑어보고** 맞는 데까지 통과시킨 뒤 처음 틀린 곳만 고쳐 씁니다.

```
 프롬프트: "대한민국의 수도는"

 초안 작가 (초안 모델, 빠름)가 4개를 씀:      서울   이다    .    그리고
 편집자 (대상 모델)가 한 번에 훑어봄:          ✔      ✔      ✘    (뒤는 버림)
 편집자가 처음 틀린 자리에 자기 토큰을 씀:    서울   이다    ,
                                              └──── 라운드 한 번에 토큰 3개 확정, 편집자는 한 번만 일함
```

(그림 속 낱말은 설명을 위한 예입니다. 아래에서는 진짜 모델이 만든 토큰으로 같은 일을 봅니다.)
"""),
("md", r"""
## 왜 필요한가

디코드 단계에서 토큰 하나를 만들 때마다 대상 모델의 가중치 전체를 메모리에서 읽어야 합니다. 큰 모델을 가속기에서 돌리면
이 단계는 계산보다 **메모리 대역폭(memory bandwidth)** 이 병목인 **메모리 한계(memory-bound)** 구간입니다(노트북 02).
그래서 같은 가중치를 한 번 읽을 때 자리 하나가 아니라 여러 자리를 함께 계산해도 시간은 거의 늘지 않습니다.
투기적 디코딩은 바로 이 점을 이용합니다: 토큰 γ개를 미리 추측해 두고, 대상 모델이 γ + 1개 자리를 **한 번에** 계산합니다.

이 컴퓨터에서 대상 모델이 토큰 1개를 계산할 때와 5개·9개를 한 번에 계산할 때의 시간을 재 봅시다.
"""),
("code", r"""
prompt = "문서를 저장하려면"
costs = spec.measure_costs(target, draft, tok, prompt, gammas=range(1, 9), reps=15)
print(f"대상 모델, 토큰 1개:        {costs['target_step_ms']:.2f} ms  (이 컴퓨터에서 측정, 중앙값)")
for g in (4, 8):
    print(f"대상 모델, 토큰 {g + 1}개 한 번에: {costs['verify_ms'][g]:.2f} ms  → 토큰 1개의 {costs['verify_cost'][g]:.2f}배")
print(f"초안 모델, 토큰 1개:        {costs['draft_step_ms']:.3f} ms  → c = 초안 한 단계 / 대상 한 단계 = {costs['c']:.3f}")
"""),
("md", r"""
토큰 5개를 한 번에 계산해도 5배가 걸리지 않습니다. 이것이 **검증(verification)** 이 싼 이유입니다.
마지막 줄의 **c** 는 초안 모델 한 단계가 대상 모델 한 단계에 비해 얼마나 싼지를 나타내는 비율로, 뒤에서 속도 향상 식에 들어갑니다.

## 어떻게 이루어지는가

한 **라운드(round)** 는 세 단계입니다 (Leviathan 등 2023, Chen 등 2023).

1. **초안**: 초안 모델이 자기 KV 캐시를 쓰며 토큰 γ개 $d_1, …, d_γ$ 를 차례로 제안합니다. γ는 **초안 토큰 수(num_speculative_tokens)** 입니다.
2. **검증**: 대상 모델이 "지금까지 확정된 마지막 토큰 + 초안 γ개"를 **한 번의 순전파**로 계산해, γ + 1개 자리의 다음 토큰 분포 $p_1, …, p_{γ+1}$ 을 얻습니다.
3. **수락/거절**: 앞에서부터 차례로 판정합니다.
   - **탐욕 디코딩(greedy decoding)**: $d_i$ 가 대상 모델의 최고 확률 토큰과 같으면 수락. 처음 다른 자리에서 멈추고, 거기에 대상 모델의 토큰을 씁니다(**수정 토큰**).
   - **샘플링(sampling)**: $d_i$ 를 확률 $\min(1, p_i(d_i)/q_i(d_i))$ 로 수락. 거절되면 $\mathrm{norm}(\max(0, p_i - q_i))$ 에서 수정 토큰을 새로 뽑습니다.
   - γ개가 모두 수락되면 대상 모델이 이미 계산해 둔 $p_{γ+1}$ 에서 **보너스 토큰(bonus token)** 을 하나 더 얻습니다.

그래서 한 라운드는 대상 모델을 **한 번** 부르고 토큰을 **1개에서 γ + 1개** 확정합니다. 라운드가 끝나면 두 모델의 KV 캐시에서
거절된 초안 자리를 잘라 냅니다. `decodelab`은 "대상 모델의 캐시 길이 = 프롬프트 + 지금까지의 토큰 − 1"(가장 새 토큰은 다음 검증 때 넣음)을
라운드마다 지키고, 테스트로 확인합니다.

## 하나의 예시로 따라가기: 라운드별로 보기

진짜 모델로 γ = 4, 탐욕 디코딩을 돌려 라운드마다 무슨 일이 있었는지 봅시다.
초록은 수락, 빨강 취소선은 거절된 초안, 주황은 수정 토큰, 파랑은 보너스 토큰입니다.
"""),
("code", r"""
example = "글꼴 크기를 바꾸려면"
result = spec.speculative_generate(target, draft, tok, example, 32, num_speculative_tokens=4, stop_at_eos=False)
display(HTML(rounds_html(result, tok)))
display(HTML(metrics_html(result)))
print("출력:", example + result.text)
"""),
("md", r"""
표에서 확인할 것:

- 라운드마다 **수정 토큰이나 보너스 토큰이 꼭 하나** 붙습니다. 초안이 전부 틀려도 그 라운드는 토큰 1개를 확정합니다.
- 거절된 자리 **뒤의** 초안은 맞았는지와 상관없이 버려집니다. 앞의 토큰이 바뀌면 뒤의 추측은 의미를 잃기 때문입니다.
- 0번 줄의 첫 토큰은 대상 모델의 프리필이 만듭니다. 그래서 **첫 토큰까지의 시간(TTFT)** 은 투기적 디코딩으로 줄지 않습니다.

위 지표의 이름은 vLLM을 따릅니다: **수락률(acceptance rate)** = 수락된 초안 토큰 / 제안된 초안 토큰,
**평균 수락 길이(mean acceptance length)** = 1 + 수락된 토큰 / 초안 라운드 수 (라운드 하나가 확정하는 평균 토큰 수).

### 직접 바꿔 보기

슬라이더로 γ와 온도(temperature)를 바꾸면 (손을 놓을 때) 짧은 생성을 다시 돌립니다. γ를 키우면 라운드 수는 줄지만
뒤쪽 자리의 수락률은 떨어집니다. 온도를 올리면 샘플링 모드로 바뀝니다.
"""),
("code", r"""
speculative_explorer(pair, prompt=prompt, max_new_tokens=24)
"""),
("md", r"""
## 왜 정확한가

**탐욕 디코딩**에서는 초안이 무엇을 내든 확정되는 토큰은 모두 대상 모델의 최고 확률 토큰입니다: 수락된 토큰은 대상 모델의 선택과 같았던 것이고,
수정·보너스 토큰은 대상 모델이 직접 고른 것입니다. 그러니 출력이 대상 모델 혼자 만든 것과 **토큰 하나까지 같아야** 합니다. 확인해 봅시다.
"""),
("code", r"""
plain = decodelab.generate(target, tok, prompt, 32, stop_at_eos=False, top_candidates=0)
for g in range(1, 9):
    r = spec.speculative_generate(target, draft, tok, prompt, 32, num_speculative_tokens=g, stop_at_eos=False)
    assert r.token_ids == plain.token_ids
    print(f"γ={g}: 대상 모델만 쓴 탐욕 디코딩과 같음 ✔  (대상 모델 호출 {r.target_forward_calls}회, 보통 디코딩은 {len(plain.token_ids)}회)")
"""),
("md", r"""
## 샘플링도 정확한 이유 (히스토그램)

샘플링에서는 초안 토큰을 $\min(1, p/q)$ 확률로 받아들입니다. 초안 모델이 대상보다 **과하게** 좋아하는 토큰($q > p$)은 일부만 통과하고,
그렇게 생긴 빈자리는 거절될 때 $\max(0, p - q)$ 에서, 곧 대상 모델이 초안보다 더 좋아하는 토큰에서 채워집니다.
두 갈래를 더하면 어떤 토큰 $x$ 가 나올 확률은 정확히 $p(x)$ 입니다:

$$P(x) = \underbrace{q(x)\min\!\Big(1, \tfrac{p(x)}{q(x)}\Big)}_{\text{초안이 }x\text{를 내고 수락}} + \underbrace{\Big(1 - \sum_y \min(p(y), q(y))\Big)}_{\text{거절될 확률}} \cdot \frac{\max(0, p(x) - q(x))}{\sum_y \max(0, p(y) - q(y))} = \min(p, q) + \max(0, p - q) = p(x).$$

토큰 세 개짜리 작은 예로 두 갈래를 직접 계산해 봅니다 (p와 q는 설명용으로 고른 값입니다).
"""),
("code", r"""
p = torch.tensor([0.5, 0.3, 0.2])
q = torch.tensor([0.25, 0.5, 0.25])
accept = torch.stack([spec.acceptance_probabilities(torch.stack([p, p]), q[None], torch.tensor([x]))[0] for x in range(3)])
residual = spec.residual_distribution(p, q)
reject = 1 - torch.minimum(p, q).sum()
total = q * accept + reject * residual
print("수락 확률 min(1, p/q):", accept.tolist())
print("거절될 확률:", round(float(reject), 4), " 수정 분포 norm(max(0, p-q)):", residual.tolist())
print("최종 분포:", [round(v, 6) for v in total.tolist()], " = p:", p.tolist())
"""),
("md", r"""
온도·top-k·top-p는 **p와 q 양쪽에 똑같이** 적용해야 합니다(한쪽에만 적용하는 것은 실제 구현에서 나왔던 버그입니다).
이제 진짜 모델로 확인합니다. 프롬프트 "모든 국민은" 뒤의 다음 토큰을 (1) 대상 모델만으로, (2) 투기적 샘플링(γ = 1)으로 3000번씩 뽑아 비교합니다.
온도 1, top-k 8을 두 모델에 똑같이 적용했습니다. 이 자리는 두 모델의 분포가 눈에 띄게 다른 곳이라 골랐습니다.
"""),
("code", r"""
N_DRAWS = 3000
exp = spec.exactness_experiment(target, draft, tok, "모든 국민은", n=N_DRAWS, temperature=1.0, top_k=8, seed=0)
# 표본 잡음의 기댓값: p에서 N_DRAWS번 뽑은 빈도가 p에서 벗어나는 TV 거리. 그림과 같은 9칸(p의 상위 8개 + 나머지)에서
# 칸마다 E|빈도 - p| ≈ √(2p(1-p)/(πn)) (이항분포의 평균 절대 편차, 정규 근사)이고, TV는 그 합의 절반입니다.
pb = torch.topk(exp["p"].double(), 8).values
pb = torch.cat([pb, (1 - pb.sum()).clamp(min=0).reshape(1)])
noise = 0.5 * float(torch.sqrt(2 * pb * (1 - pb) / (torch.pi * N_DRAWS)).sum())
print(f"초안 모델 q와 대상 모델 p의 거리(총변동 거리, TV): {exp['tv_pq']:.3f}   (0이면 두 분포가 같음)")
print(f"대상 모델만 샘플링한 결과와 p의 거리: {exp['tv_target']:.3f}")
print(f"투기적 샘플링한 결과와 p의 거리:     {exp['tv_spec']:.3f}   ({N_DRAWS}번 뽑을 때 표본 잡음의 기댓값: 약 {noise:.3f})")
print(f"이 자리의 수락률: {exp['accept_rate']:.2f}")
fig = exactness_figure(exp, tok)
"""),
("md", r"""
초안 모델의 분포(회색)는 대상 모델(검정)과 다르지만, 투기적 샘플링의 결과(주황)는 대상 모델만으로 뽑은 결과(파랑)와 같은 모양입니다.
두 결과가 p에서 떨어진 정도는 같은 크기이고, 그것은 표본이 유한해서 생기는 잡음입니다. (저장소의 테스트는 어휘 전체를 나열해 두 분포가 $10^{-6}$ 까지 같은지도 확인합니다.)

## 예측과 측정 비교

Leviathan 등(2023)은 토큰마다 수락 확률이 α로 같다고 보고 두 식을 냅니다.

- 대상 모델 호출 한 번당 기대 토큰 수: $\dfrac{1 - α^{γ+1}}{1 - α}$
- 기대 속도 향상: $\dfrac{1 - α^{γ+1}}{(1 - α)(γc + 1)}$ — 분모는 한 라운드의 비용(초안 γ단계 + 검증 한 번)을 대상 모델 한 단계 단위로 센 것입니다.

논문의 T5 실험 조건(α = 0.75, γ = 7, c ≈ 0.02)을 넣으면:
"""),
("code", r"""
print(f"기대 토큰 수 {spec.expected_tokens_per_call(0.75, 7):.2f}개/호출, 기대 속도 향상 {spec.expected_speedup(0.75, 7, 0.02):.2f}배")
print("(논문이 같은 조건에서 잰 값: 3.4배 — facts/speculative.md의 'Published speedups' 표)")
"""),
("md", r"""
이제 이 컴퓨터에서 γ를 바꿔 가며 대상 모델만 쓴 탐욕 디코딩과 투기적 디코딩을 번갈아 재고, 측정한 α와 c로 식의 예측을 함께 그립니다.
프롬프트는 도움말 문체 하나와 법조문 문체 하나입니다. (시간은 다른 작업의 영향을 받아 실행할 때마다 달라집니다. 같은 실행 안의 비율을 보세요.)
"""),
("code", r"""
rows = spec.speedup_sweep(target, draft, tok, [prompt, "국회는 법률을"], 32, gammas=range(1, 7))
print(" γ   수락률 α   평균 수락 길이(측정)   식의 기대 토큰 수   속도 향상(측정)   식의 예측")
for r in rows:
    e_len = spec.expected_tokens_per_call(r.acceptance_rate, r.gamma)
    pred = spec.expected_speedup(r.acceptance_rate, r.gamma, costs["c"])
    print(f"{r.gamma:>2}   {r.acceptance_rate:8.2f}   {r.mean_acceptance_length:18.2f}   {e_len:16.2f}   {r.speedup:13.2f}배   {pred:7.2f}배")
longer = sum(r.mean_acceptance_length > spec.expected_tokens_per_call(r.acceptance_rate, r.gamma) for r in rows)
print(f"\n측정한 평균 수락 길이가 식의 기대값보다 긴 γ: {longer}/{len(rows)}개")
fig = speedup_figure(rows, costs["c"], costs["verify_cost"])
"""),
("md", r"""
식과 측정이 어긋나는 까닭은 식의 두 가정에 있습니다.

1. **수락이 서로 독립이라는 가정.** 식은 자리마다 같은 확률 α로, 앞 자리와 상관없이 수락된다고 봅니다. 실제로는 쉬운 구간(되풀이되는 문구)에서는
   한 라운드가 통째로 수락되고, 어려운 구간에서는 연달아 거절됩니다. 이 강좌의 작은 모델은 같은 문구를 자주 되풀이해서, 평균 수락 길이가 식의
   기대값보다 길게 나오는 일이 많습니다(위 표의 두 열을 비교하세요). 그러면 측정이 식보다 빠릅니다.
2. **검증 비용이 대상 모델 한 단계와 같다는 가정.** 가속기의 큰 모델에서는 거의 맞지만, 이 CPU에서는 앞에서 잰 것처럼 토큰 여러 개의 검증이
   조금 더 걸릴 수 있습니다. 그 측정값을 식에 넣은 것이 보라 점선입니다.

여기에 라운드마다의 부수 작업(수락 판정, 캐시 자르기)과 측정 잡음이 더해집니다. 식은 "어느 쪽으로 가야 빨라지는가"를 알려 주는 어림셈이고,
실제 속도는 재 봐야 압니다.

## CPU에서 속도 향상이 작은 이유

속도 향상 식의 분모 $γc + 1$ 을 보면, 초안이 싸야(c가 작아야) 이득이 납니다. 그런데 아주 작은 모델을 CPU에서 돌리면
호출 한 번마다 드는 **고정 오버헤드**(파이썬 코드, 연산 하나하나를 부르는 비용)가 실제 계산보다 큽니다. 매개변수가 훨씬 적은 초안 모델도
transformers로 부르면 한 단계가 그만큼 싸지지 않습니다. `decodelab`은 초안 모델만 같은 가중치로 군더더기 없이 계산하는 짧은 구현으로 돌려 c를 줄입니다
(대상 모델은 언제나 transformers 그대로라서 출력과 비교가 공정합니다). 두 방식의 c를 재고, **같은 수락률**에서 식이 예측하는 속도 향상을 비교합니다.
"""),
("code", r"""
from decodelab.proposers import DraftModelProposer
c_hf = spec.measure_costs(target, DraftModelProposer(draft, backend="transformers"), tok, prompt, gammas=(), reps=15)["c"]
c_lean = spec.measure_costs(target, DraftModelProposer(draft, backend="lean"), tok, prompt, gammas=(), reps=15)["c"]
for a in (0.6, 0.8):
    print(f"수락률 α = {a}, γ = 4일 때 식의 예측:")
    print(f"   초안을 transformers로 부를 때  c = {c_hf:.3f} → {spec.expected_speedup(a, 4, c_hf):.2f}배  (이 컴퓨터에서 잰 c)")
    print(f"   초안을 짧은 구현으로 부를 때   c = {c_lean:.3f} → {spec.expected_speedup(a, 4, c_lean):.2f}배  (이 컴퓨터에서 잰 c)")
    print(f"   가속기의 큰 모델 쌍            c = 0.020 → {spec.expected_speedup(a, 4, 0.02):.2f}배  (Leviathan 등 2023의 c)")
"""),
("md", r"""
같은 수락률이라면 c가 큰 CPU 쪽의 속도 향상이 언제나 작습니다. 가속기의 큰 모델에서는 대상 모델 한 단계가 가중치 읽기에 묶인 메모리 한계라서,
작은 초안 모델과의 한 단계 시간 차이가 대략 매개변수 수의 차이를 따라 크게 벌어지고(Leviathan 등 2023의 T5 쌍: c ≈ 0.02), γ + 1개 자리의 검증도 거의 한 단계 값입니다.
보고된 속도 향상은 2-3배입니다(Leviathan 등 2023: T5-XXL에서 2-3배, Chen 등 2023: Chinchilla 70B에서 2-2.5배 — facts/speculative.md).

위에서 이 컴퓨터의 측정이 그에 못지않게 나왔다면, 그것은 c가 작아서가 아니라 수락률이 유난히 높아서입니다: 초안 모델을 대상 모델을 흉내 내도록
학습(증류)했고, 두 모델 모두 같은 문구를 자주 되풀이합니다. 열린 형식의 자유로운 글처럼 예측하기 어려운 출력에서는 수락률이 떨어지고,
그때는 c의 차이가 그대로 드러납니다(AWS도 열린 형식의 글에서는 이득이 작았다고 보고합니다, 아래 표).

### 초안 모델이 없어도 되는 방법: 프롬프트 찾기(n-gram)

모델 없이 "방금 쓴 마지막 몇 토큰이 앞에서 나온 적이 있으면 그 뒤를 그대로 제안"하는 방법도 있습니다(vLLM의 `ngram` 방법, prompt lookup decoding).
c는 거의 0이지만 수락률은 글 안의 반복에 달려 있습니다. 출력은 여기서도 대상 모델과 같습니다.
"""),
("code", r"""
from decodelab.proposers import NGramProposer
r_ng = spec.speculative_generate(target, NGramProposer(), tok, prompt, 32, num_speculative_tokens=4, stop_at_eos=False)
assert r_ng.token_ids == plain.token_ids
print(f"n-gram 초안: 수락률 {r_ng.acceptance_rate:.2f}, 초안 라운드 {r_ng.num_drafts}회, 대상 모델 호출 {r_ng.target_forward_calls}회, "
      f"초안 모델 호출 {r_ng.draft_forward_calls}회")
"""),
("md", r"""
## 실제 서비스에서: AWS Trainium과 vLLM

두 번째 시드 글은 AWS가 자사 칩 **AWS Trainium** 에서 인기 서빙 라이브러리 **vLLM** 과 함께 투기적 디코딩을 쓰고 있다고 전합니다.
AWS의 기술 블로그(2026년 4월 무렵, hardware.md)가 밝힌 결과는 이렇습니다.

| 항목 | 보고된 값 | 출처 |
|---|---|---|
| **토큰 간 지연(ITL)** | 최대 약 3배 낮아짐 | AWS ML 블로그 (facts/hardware.md) |
| **첫 토큰까지의 시간(TTFT)** | 변화 없음 | 같은 글 |
| 잘 맞은 초안 토큰 수 | 5-15 | 같은 글 |
| 이득이 작았던 경우 | 열린 형식의 자유로운 글 | 같은 글 |
| 예제 모델 쌍 | 대상 Qwen3-32B, 초안 Qwen3-0.6B (Trn2) | AWS Neuron 튜토리얼 (facts/hardware.md) |
| Trainium2 칩 | 메모리 96 GiB, 대역폭 2.9 TB/s, BF16 667 TFLOP/s | AWS Neuron 문서 (facts/hardware.md) |
| Trainium3 칩 | 메모리 144 GiB HBM3e, 대역폭 4.9 TB/s, BF16 671 TFLOP/s | AWS Neuron 문서 (facts/hardware.md) |

이 노트북에서 본 것과 맞아떨어집니다: 프리필은 그대로라 TTFT는 변하지 않고, 디코드의 토큰 간 지연이 줄어듭니다. 초안 모델이 대상보다
수십 배 작아(아래 셀에서 두 모델의 공개 config.json으로 계산합니다) c가 아주 작으니 γ를 5-15처럼 크게 잡아도 이득이 납니다.
예측하기 어려운 글에서는 수락률이 낮아 이득이 작습니다.
"""),
("code", r"""
from decodelab import latency as lat
big, small = lat.get_model("Qwen3-32B"), lat.get_model("Qwen3-0.6B")   # 공개 config.json (BF16)
ratio = big.n_params / small.n_params
print(f"Qwen3-32B {big.n_params / 1e9:.1f}B개 ÷ Qwen3-0.6B {small.n_params / 1e9:.2f}B개 = {ratio:.0f}배 "
      f"→ 초안은 대상의 약 1/{ratio:.0f} 크기  [huggingface.co/Qwen config.json에서 계산]")
"""),
("md", r"""

vLLM에서는 설정 하나로 켭니다 (vLLM 문서 "Draft Models"의 예; 이 강좌의 컴퓨터에는 vLLM이 없어 실행하지 않습니다):

```python
from vllm import LLM
llm = LLM(model="Qwen/Qwen3-8B",
          speculative_config={"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 5, "method": "draft_model"})
```

## vLLM이 보고하는 지표

vLLM V1은 투기적 디코딩의 카운터를 이런 이름으로 내보냅니다(hardware.md의 'Serving metrics'). `decodelab`의 결과에도 같은 이름의 값이 있습니다.
"""),
("code", r"""
print(f"vllm:spec_decode_num_drafts                 = {result.num_drafts}")
print(f"vllm:spec_decode_num_draft_tokens           = {result.num_draft_tokens}")
print(f"vllm:spec_decode_num_accepted_tokens        = {result.num_accepted_tokens}")
print(f"vllm:spec_decode_num_accepted_tokens_per_pos = {result.num_accepted_tokens_per_pos}")
print(f"수락률 = accepted / draft tokens = {result.acceptance_rate:.3f}")
print(f"평균 수락 길이 = 1 + accepted / drafts = {result.mean_acceptance_length:.3f}")
"""),
("md", r"""
## 언제 쓰고 언제 쓰지 않는가

- **잘 맞는 곳**: 한 사용자가 긴 답을 기다리는 디코드 중심 작업(에이전트 루프, 코드 생성), 초안이 잘 맞히는 예측하기 쉬운 출력,
  입력을 많이 되풀이하는 출력(요약·편집: n-gram 초안), 대상 모델이 메모리 한계인 가속기.
- **맞지 않는 곳**: 수락률이 낮을 때(라운드마다 토큰 1개 + 초안 비용만 남음), 초안이 대상만큼 느릴 때(c가 1에 가까움), 요청을 아주 많이 묶어
  처리해 디코드가 이미 연산 한계(compute-bound)일 때(검증이 더는 공짜가 아님), 첫 토큰까지의 시간만 중요한 짧은 답.
- **흔한 오해**: "투기적 디코딩은 답의 품질을 조금 희생한다" — 아닙니다. 탐욕 디코딩이면 토큰까지 같고, 샘플링이면 분포가 같습니다. 바뀌는 것은 속도뿐입니다.

## 핵심 정리

- 초안 모델이 γ개를 제안하고, 대상 모델이 γ + 1개 자리를 한 번의 순전파로 검증합니다. 라운드마다 토큰 1개에서 γ + 1개가 확정됩니다.
- 탐욕 디코딩: 대상 모델 혼자 만든 출력과 토큰까지 같습니다. 샘플링: $\min(1, p/q)$ 수락과 $\mathrm{norm}(\max(0, p - q))$ 재추출 덕분에 분포가 같습니다.
- 속도 향상 ≈ $\dfrac{1 - α^{γ+1}}{(1 - α)(γc + 1)}$: 수락률 α가 높고 c가 작을수록 큽니다. 작은 모델의 CPU에서는 호출 오버헤드 때문에 c가 커져 이득이 작습니다.
- TTFT는 그대로, 토큰 간 지연이 줄어듭니다(AWS Trainium + vLLM: 최대 약 3배).

## 확인 문제
답을 고르거나 입력하면 바로 채점되고 해설이 나옵니다.
"""),
("code", r"""
from decodelab.quiz import quiz_widget
quiz_widget("04")
"""),
]

if __name__ == "__main__":
    build("04_speculative_decoding.ipynb", cells)

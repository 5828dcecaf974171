#!/usr/bin/python3
"""Writes the synthetic corpus of the article's sentence: "这个动物并没有过马路，因为它太累了。"
in many variations, each followed by the sentence that resolves the pronoun ("它指的是动物。").

An adjective belongs either to the animal (累: tired, so 它 is the animal) or to the obstacle
(宽: wide, so 它 is the obstacle); nothing else in a sentence tells which noun 它 means.

Held out from training, for the tests: a share of the (animal, obstacle, adjective)
combinations, and whole sentence frames. Every noun and adjective still occurs in training.

Usage: make_corpus.py OUT_DIR [--train N] [--heldout N] [--seed S]
Writes OUT_DIR/train.txt (one example a line), OUT_DIR/heldout.tsv
(kind, prompt, referent, other noun) and OUT_DIR/vocabulary.txt (the nouns and adjectives).
"""
import argparse
import os
import random

ANIMALS = ["动物", "猫", "狗", "兔子", "小狗", "小猫", "老虎", "狮子", "熊", "马", "牛", "羊",
           "猴子", "狐狸", "鸭子", "乌龟", "松鼠", "老鼠", "大象", "鹿", "狼", "猪", "鸡", "鹅",
           "熊猫", "袋鼠", "刺猬", "青蛙", "蜗牛", "骆驼", "斑马", "长颈鹿", "小鸟", "企鹅", "河马"]
OBSTACLES = ["马路", "河", "桥", "街道", "小溪", "山", "围墙", "铁路", "隧道", "湖", "山谷",
             "路口", "池塘", "草地", "沟", "公路", "高速公路", "大桥", "小河", "水沟", "斜坡",
             "沙漠", "森林", "田野", "广场", "峡谷", "冰面", "雪地", "沼泽"]
# "animal": the adjective can only describe the animal; "obstacle": only the obstacle.
ADJECTIVES = {
    "animal": ["累", "饿", "困", "害怕", "紧张", "懒", "虚弱", "胆小", "渴", "疲惫"],
    "obstacle": ["宽", "长", "危险", "陡", "深", "拥挤", "滑", "远", "高", "泥泞"],
}
# {a}: the animal, {o}: the obstacle, {j}: the adjective. The first is the article's.
TRAIN_FRAMES = [
    "这个{a}并没有过{o}，因为它太{j}了。",
    "那个{a}没有过{o}，因为它太{j}了。",
    "{a}不想过{o}，因为它太{j}了。",
    "这个{a}没能穿过{o}，因为它实在太{j}了。",
    "{a}停在{o}前面，因为它太{j}了。",
    "那个{a}不敢过{o}，因为它太{j}了。",
    "{a}放弃了过{o}，因为它太{j}了。",
    "这个{a}没有走过{o}，因为它非常{j}。",
    "{a}最后没有过{o}，原来它太{j}了。",
    "一个{a}没有过{o}，它太{j}了。",
]
# New arrangements of the training frames' words (a new word would be unknown to the
# tokenizer, which is trained on the training sentences alone).
HELDOUT_FRAMES = [
    "{a}没有过{o}，因为它实在太{j}了。",
    "那个{a}最后不想过{o}，原来它非常{j}。",
]
RESOLUTION = "它指的是"
# The article's pair: these two combinations always stay in training.
ARTICLE = {("动物", "马路", "累"), ("动物", "马路", "宽")}


def combinations():
    return [(a, o, j, kind) for a in ANIMALS for o in OBSTACLES
            for kind, adjectives in ADJECTIVES.items() for j in adjectives]


def referent(a, o, kind):
    return (a, o) if kind == "animal" else (o, a)


def sentence(frame, a, o, j):
    return frame.format(a=a, o=o, j=j)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--train", type=int, default=60000, help="training examples")
    parser.add_argument("--heldout", type=int, default=400, help="held-out test sentences")
    parser.add_argument("--heldout-share", type=float, default=0.1,
                        help="share of the combinations kept out of training")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    combos = combinations()
    rng.shuffle(combos)
    n_held = int(len(combos) * args.heldout_share)
    held = [c for c in combos if (c[0], c[1], c[2]) not in ARTICLE][:n_held]
    held_set = set(held)
    train = [c for c in combos if c not in held_set]
    # Every word must occur in training, or the model could not know it.
    for position in range(3):
        words = {c[position] for c in combos}
        assert words == {c[position] for c in train}, "a word occurs only in held-out sentences"

    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "train.txt"), "w", encoding="utf-8") as f:
        for _ in range(args.train):
            a, o, j, kind = rng.choice(train)
            frame = rng.choice(TRAIN_FRAMES)
            right, _ = referent(a, o, kind)
            f.write(f"{sentence(frame, a, o, j)}{RESOLUTION}{right}。\n")
        # The article's two sentences are in every corpus, whatever its size.
        for a, o, j in sorted(ARTICLE):
            kind = "animal" if j in ADJECTIVES["animal"] else "obstacle"
            f.write(f"{sentence(TRAIN_FRAMES[0], a, o, j)}{RESOLUTION}{referent(a, o, kind)[0]}。\n")

    # Held-out sentences: held-out combinations in training frames, and any combination in
    # held-out frames; half of each kind.
    with open(os.path.join(args.out_dir, "heldout.tsv"), "w", encoding="utf-8") as f:
        f.write("# kind\tprompt\treferent\tother noun (written by tools/coref/make_corpus.py)\n")
        for kind in ADJECTIVES:
            of_kind = [c for c in held if c[3] == kind]
            for i in range(args.heldout // 2):
                a, o, j, _ = rng.choice(of_kind)
                frames = TRAIN_FRAMES if i % 2 == 0 else HELDOUT_FRAMES
                right, other = referent(a, o, kind)
                f.write(f"{kind}\t{sentence(rng.choice(frames), a, o, j)}{RESOLUTION}\t{right}\t{other}\n")

    with open(os.path.join(args.out_dir, "vocabulary.txt"), "w", encoding="utf-8") as f:
        for word in ANIMALS + OBSTACLES + ADJECTIVES["animal"] + ADJECTIVES["obstacle"]:
            f.write(word + "\n")


if __name__ == "__main__":
    main()
